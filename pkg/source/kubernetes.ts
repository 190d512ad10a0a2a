// The Kubernetes API source: the kinds it is given (pkg/cluster's table, chosen by the flags: Services,
// EndpointSlices or core/v1 Endpoints, the --config-map ConfigMap), listed and watched by one Reflector
// each; more later through watch() (Nodes, once federations are configured). Raw objects go to the
// sink (the store trims them); the source itself remembers only key → resourceVersion per object.
// Events of one list page or one chunk of watch events form a batch, ended by flush(); synced()
// follows the first complete list of every kind that is not optional.

import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import type { BackoffOptions } from './kubernetes-backoff.ts';
import { KubeConnectionError, connectKube } from './kubernetes-client.ts';
import { RestClientRequests } from './kubernetes-requests.ts';
import type { KubeClient, KubeConnectionOptions } from './kubernetes-client.ts';
import type { Change } from './kubernetes-known.ts';
import { HttpStatusError, Reflector, readBody, statusMessage } from './kubernetes-reflector.ts';
import type { RestartReason } from './kubernetes-reflector.ts';
import { collectionPaths, describeWatch } from './source.ts';
import type { KubeObject, Source, SourceSink, Watch } from './source.ts';

export interface KubernetesSourceOptions {
  /** How to reach the API server; or a ready client. */
  connection: KubeConnectionOptions | (() => Promise<KubeClient>);
  /** What to list and watch from the start. */
  watches: readonly Watch[];
  /** Objects per list page. Default 500. */
  pageSize?: number;
  /** A watch with no event or bookmark for this long is restarted; the server is asked to end watches after half of it. Default 5 min. */
  silentWatchMs?: number;
  backoff?: BackoffOptions;
  log?: Logger;
}

export interface KindStatus {
  kind: string;
  objects: number;
  relists: number;
  /** Seconds since the last list, event or bookmark of this kind (null before the first list). */
  lastEventAgeSeconds: number | null;
  restarts: Record<RestartReason, number>;
}

/** What the program's metrics read: plain numbers, at scrape time. */
export interface KubernetesSourceStatus {
  synced: boolean;
  kinds: KindStatus[];
}

export class KubernetesSourceStartedError extends Error {
  readonly code = 'SOURCE_ERR_STARTED';
  constructor() {
    super('Kubernetes API source was already started');
    this.name = 'KubernetesSourceStartedError';
  }
}

/** When the change behind an object happened, if the object says (EndpointSlices and Endpoints do; others never carry the annotation). */
function triggerTime(o: KubeObject): number | null {
  const t = o.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'];
  if (!t) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

export class KubernetesSource implements Source {
  /**
   * Called after each flush of watch events, with seconds from each change to its being served, and
   * the object changed when it said when its change happened (an EndpointSlice's trigger time).
   */
  onProgrammed: ((seconds: number, triggered: KubeObject | null) => void) | null = null;
  /** Every request sent to the API server. */
  readonly requests = new RestClientRequests();
  private readonly o: KubernetesSourceOptions;
  private readonly log: Logger;
  private readonly watches: Watch[];
  private reflectors: Reflector[] = [];
  private sink: SourceSink | null = null;
  private client: KubeClient | null = null;
  private listed = new Set<string>();
  private isSynced = false;
  /** When each change of the current batch happened (ms), and the object when it said so, for the programming latency. */
  private pendingTriggers: { at: number; triggered: KubeObject | null }[] = [];
  private stopped = false;
  private makeReflector: ((w: Watch) => Reflector) | null = null;

  constructor(o: KubernetesSourceOptions) {
    this.o = o;
    this.log = o.log ?? createLogger('kubernetes-source');
    this.watches = [...o.watches];
  }

  describe(): string {
    return `Kubernetes API${this.client ? ` ${this.client.server}` : ''}: ${this.watched().join(', ')}`;
  }

  /** What is listed and watched, for describe() and the start log line. */
  private watched(): string[] {
    return this.watches.map(describeWatch);
  }

  status(): KubernetesSourceStatus {
    const now = Date.now();
    return {
      synced: this.isSynced,
      kinds: this.reflectors.map((r) => ({
        kind: r.kind,
        objects: r.stats.objects,
        relists: r.stats.relists,
        lastEventAgeSeconds: r.stats.lastActivity ? (now - r.stats.lastActivity) / 1000 : null,
        restarts: { ...r.stats.restarts },
      })),
    };
  }

  /** Connects (a bad kubeconfig or URL rejects), logs where and as whom, and starts listing. */
  async start(sink: SourceSink): Promise<void> {
    if (this.sink) throw new KubernetesSourceStartedError();
    this.sink = sink;
    const c = this.o.connection;
    this.client = this.requests.counted(typeof c === 'function' ? await c() : await connectKube(c));
    const client = this.client;
    const common = {
      client,
      pageSize: this.o.pageSize ?? 500,
      silentWatchMs: this.o.silentWatchMs ?? 300_000,
      backoff: this.o.backoff,
      onBatch: () => this.flush(),
    };
    const make = (w: Watch): Reflector =>
      new Reflector({
        ...common,
        kind: w.kind.kind,
        optional: w.kind.optional,
        forgetful: w.kind.forgetful,
        paths: collectionPaths(w),
        fieldSelector: w.fieldSelector,
        protobuf: w.kind.protobuf,
        log: this.log,
        // A forgetful kind (Pods) feeds an index, not the zone: its events are no DNS programming.
        onChange: (change, o, watched) => this.change(w.kind.kind, change, o, watched && !w.kind.forgetful),
        onListed: () => this.kindListed(w.kind.kind),
      });
    this.reflectors = this.watches.map(make);
    this.makeReflector = make;
    this.log.info('connecting to the Kubernetes API', { server: client.server, identity: client.identity, watching: this.watched().join(', '), silentWatchMs: common.silentWatchMs });
    for (const r of this.reflectors) r.start();
  }

  /**
   * Lists and watches `w` from now on (Nodes: federation answers need their topology labels); again
   * for a kind already watched is nothing. Before start() it starts with the rest. Never undone: a
   * federation removed from the config later leaves the Node watch running.
   */
  watch(w: Watch): void {
    if (this.watches.some((x) => x.kind.kind === w.kind.kind)) return;
    this.watches.push(w);
    if (!this.makeReflector || this.stopped) return;
    const r = this.makeReflector(w);
    this.reflectors.push(r);
    this.log.info(`watching ${describeWatch(w)} too`, { server: this.client?.server });
    r.start();
  }

  /**
   * One GET of a collection `path` (with its query) outside the watches, for a question asked once in
   * a while (kube-dns's lame duck: is this pod still serving?). Rejects before start() and for an HTTP
   * error; `timeoutMs` bounds it.
   */
  async list(path: string, timeoutMs: number): Promise<KubeObject[]> {
    if (this.client === null) throw new KubeConnectionError('not connected yet: start() first');
    const res = await this.client.get(path, AbortSignal.timeout(timeoutMs));
    const body = await readBody(res);
    if (res.statusCode !== 200) throw new HttpStatusError(res.statusCode ?? 0, statusMessage(res.statusCode ?? 0, body));
    return (JSON.parse(body) as { items?: KubeObject[] }).items ?? [];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.reflectors.map((r) => r.stop()));
  }

  /** `programs`: a watched change of the zone, timed into the programming latency at the next flush. */
  private change(kind: string, change: Change, o: KubeObject, programs: boolean): void {
    if (programs) {
      const at = triggerTime(o);
      this.pendingTriggers.push(at === null ? { at: Date.now(), triggered: null } : { at, triggered: o });
    }
    this.sink!.event({ type: change, kind, object: o });
  }

  private flush(): void {
    this.sink!.flush();
    if (this.pendingTriggers.length === 0) return;
    // flush() rebuilt the zone synchronously: from here on the change is served.
    const now = Date.now();
    const observe = this.onProgrammed;
    for (const t of this.pendingTriggers) observe?.(Math.max(0, now - t.at) / 1000, t.triggered);
    this.pendingTriggers = [];
  }

  private kindListed(kind: string): void {
    this.listed.add(kind);
    // An optional kind (Nodes, for federations) never holds readiness: without its RBAC its list is
    // refused for good, and the cluster zone does not depend on it.
    if (this.isSynced || this.reflectors.some((r) => !r.optional && !this.listed.has(r.kind))) return;
    this.isSynced = true;
    const counts = Object.fromEntries(this.reflectors.map((r) => [r.kind, r.stats.objects]));
    this.log.info('listed every kind once: synced', counts);
    this.sink!.synced();
  }
}
