// One kind's list + watch loop against the API server. Lists in pages, then watches from the list's
// resourceVersion with bookmarks; every event moves the resourceVersion on. It never gives up:
//   410 Gone (HTTP status, or an ERROR event with code 410)  → relist, diffed against what was known
//   the server ends the watch (its timeoutSeconds)            → watch again from the last resourceVersion
//   no byte for silentWatchMs                                 → tear the watch down, watch again
//   a list page with no byte for min(silentWatchMs, 60 s)     → give it up, back off, list again
//   any error (connection refused, 401, 403, 5xx, bad JSON)   → back off (0.5 s → 5 s, jittered), retry
// Lists are asked in protobuf for a kind that names its fields (WatchedKind.protobuf), in JSON otherwise
// or when the server answers JSON (a CRD); a protobuf list it cannot read turns this kind to JSON.
// Errors are logged once per change of state (kind and HTTP status), and once more on recovery.

import type { IncomingMessage } from 'node:http';
import type { Logger } from '../log/log.ts';
import { Backoff } from './kubernetes-backoff.ts';
import type { BackoffOptions } from './kubernetes-backoff.ts';
import type { KubeClient } from './kubernetes-client.ts';
import { ForgetfulObjects, KnownObjects } from './kubernetes-known.ts';
import type { Known } from './kubernetes-known.ts';
import type { Change } from './kubernetes-known.ts';
import { SilenceWatchdog } from './kubernetes-silence.ts';
import { PROTOBUF_CONTENT_TYPE, ProtobufError, STATUS_FIELDS, decodeProtobuf, decodeProtobufList } from './kubernetes-protobuf.ts';
import type { ProtoSchema } from './kubernetes-protobuf.ts';
import type { KubeObject, RelistHooks } from './source.ts';

export type RestartReason = 'expired' | 'closed' | 'silent' | 'error';
export const RESTART_REASONS: readonly RestartReason[] = ['expired', 'closed', 'silent', 'error'];

export interface ReflectorOptions {
  kind: string;
  /** The kind's hooks when it is too numerous to remember per object (WatchedKind.forgetful). */
  forgetful?: RelistHooks;
  /** Its first list does not hold the source's first sync. */
  optional?: boolean;
  /** Collection paths, e.g. [/api/v1/services]: the first the server serves is used (a CRD's versions, newest first). */
  paths: readonly string[];
  fieldSelector?: string;
  /** The kind's fields in protobuf (WatchedKind.protobuf): lists asked in protobuf. */
  protobuf?: ProtoSchema;
  client: KubeClient;
  log: Logger;
  pageSize: number;
  silentWatchMs: number;
  backoff?: BackoffOptions;
  /** One object changed; `watched` is false for list results. */
  onChange(change: Change, o: KubeObject, watched: boolean): void;
  /** The end of a batch (a list page, the end of a list, a chunk of watch events). */
  onBatch(): void;
  /** The first complete list. */
  onListed(): void;
}

export interface ReflectorStats {
  objects: number;
  /** Lists after the first one. */
  relists: number;
  /** Date.now() of the last list, event or bookmark (0 before any). */
  lastActivity: number;
  restarts: Record<RestartReason, number>;
}

export class HttpStatusError extends Error {
  readonly code = 'SOURCE_ERR_KUBE_HTTP';
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpStatusError';
    this.status = status;
  }
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; message?: string; reason?: string };
}

/** A list page silent this long is dead: the API server's own request timeout is 60 s. */
const LIST_SILENCE_MS = 60_000;

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

/** The whole body as bytes (a protobuf list, or JSON still to decode). */
async function readBytes(res: IncomingMessage, onData: () => void): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) {
    onData();
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

export async function readBody(res: IncomingMessage, onData?: () => void): Promise<string> {
  res.setEncoding('utf8');
  let body = '';
  for await (const chunk of res) {
    onData?.();
    body += chunk as string;
  }
  return body;
}

/** What an error answer says: a Status's message, in JSON or (a list asked in protobuf) protobuf. */
export function statusMessage(status: number, body: string | Buffer, contentType = ''): string {
  try {
    const s = contentType.startsWith(PROTOBUF_CONTENT_TYPE) && Buffer.isBuffer(body) ? decodeProtobuf(body, STATUS_FIELDS) : (JSON.parse(body.toString()) as { message?: string });
    if (s.message) return `HTTP ${status}: ${s.message}`;
  } catch {
    // not a Status object
  }
  return `HTTP ${status}`;
}

interface RequestGuard {
  signal: AbortSignal;
  /** The silence limit passed and aborted the request. */
  silent: boolean;
  /** Bytes arrived. */
  poke(): void;
  abort(): void;
  dispose(): void;
}

export class Reflector {
  readonly kind: string;
  readonly optional: boolean;
  readonly stats: ReflectorStats = { objects: 0, relists: 0, lastActivity: 0, restarts: { expired: 0, closed: 0, silent: 0, error: 0 } };
  private readonly o: ReflectorOptions;
  private readonly known: Known;
  private readonly backoff: Backoff;
  private readonly stopper = new AbortController();
  private resourceVersion = '';
  /** Which of o.paths is in use. */
  private pathIndex = 0;
  private listedOnce = false;
  private problem: string | null = null;
  private sleepTimer: NodeJS.Timeout | null = null;
  /** The kind's protobuf fields while its lists are asked in protobuf; null: JSON. */
  private protobuf: ProtoSchema | null;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(o: ReflectorOptions) {
    this.kind = o.kind;
    this.optional = o.optional ?? false;
    this.o = o;
    this.known = o.forgetful ? new ForgetfulObjects(o.forgetful) : new KnownObjects();
    this.backoff = new Backoff(o.backoff);
    this.protobuf = o.protobuf ?? null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.wake?.();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.resourceVersion) await this.list();
        if (this.stopped) return;
        const began = Date.now();
        const reason = await this.watch();
        if (this.stopped) return;
        this.stats.restarts[reason]++;
        if (reason === 'expired') {
          this.o.log.info('watch expired (410), relisting', { kind: this.kind });
          this.resourceVersion = '';
        }
        if (reason === 'silent') this.o.log.warn('watch silent too long, restarting it', { kind: this.kind, limitMs: this.o.silentWatchMs, resourceVersion: this.resourceVersion });
        // A watch the server ends at once, again and again (a proxy, an overloaded server), backs off too.
        if (reason === 'closed' && Date.now() - began < 1000) await this.sleep(this.backoff.next());
      } catch (e) {
        if (this.stopped) return;
        this.report(e);
        await this.sleep(this.backoff.next());
      }
    }
  }

  private report(e: unknown): void {
    const status = e instanceof HttpStatusError ? e.status : undefined;
    const code = e instanceof HttpStatusError ? undefined : (e as NodeJS.ErrnoException).code;
    const error = code ? `${code}: ${(e as Error).message}` : (e as Error).message;
    // The state is the status or the error code where there is one: a reset connection reads "aborted",
    // "read ECONNRESET" or a TLS message by the phase it broke in, and is one state all the same.
    const state = status !== undefined ? `HTTP ${status}` : (code ?? error);
    if (state === this.problem) return;
    this.problem = state;
    // An optional kind (Nodes, Pods) holds nothing else back: say so, not "not synced yet".
    const keeping = this.listedOnce ? ', serving the last known state' : this.optional ? ' (optional: only what needs it waits)' : ', not synced yet';
    this.o.log.error(`cannot list/watch ${this.kind}${keeping}; retrying with backoff`, { kind: this.kind, status, err: error });
  }

  private recovered(): void {
    if (this.problem === null) return;
    this.problem = null;
    this.o.log.info('API connection recovered', { kind: this.kind });
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.sleepTimer = setTimeout(resolve, ms);
    });
  }

  private query(extra: Record<string, string>): string {
    const q = new URLSearchParams(extra);
    if (this.o.fieldSelector) q.set('fieldSelector', this.o.fieldSelector);
    return `${this.o.paths[this.pathIndex]}?${q}`;
  }

  /** A full list, page by page, diffed against what was known. */
  private async list(): Promise<void> {
    const relist = this.known.relist();
    let cont = '';
    let rv = '';
    do {
      const q: Record<string, string> = { limit: String(this.o.pageSize) };
      if (cont) q.continue = cont;
      const page = await this.listPageOfAnyVersion(q);
      for (const item of page.items ?? []) {
        const change = relist.item(item);
        if (change) this.o.onChange(change, item, false);
      }
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue ?? '';
      this.o.onBatch();
    } while (cont && !this.stopped);
    if (this.stopped) return;
    for (const gone of relist.finish()) this.o.onChange('delete', gone, false);
    this.o.onBatch();
    this.resourceVersion = rv;
    this.stats.objects = this.known.size;
    this.stats.lastActivity = Date.now();
    if (this.listedOnce) this.stats.relists++;
    this.recovered();
    this.backoff.reset();
    this.o.log.debug(1, 'listed', { kind: this.kind, objects: this.known.size, resourceVersion: rv });
    if (!this.listedOnce) {
      this.listedOnce = true;
      this.o.onListed();
    }
  }

  /**
   * A list page from the first path the server serves: a 404 moves on to the next (an older version
   * of a CRD); when none is served, the error says so and the next try starts from the newest.
   */
  private async listPageOfAnyVersion(q: Record<string, string>): Promise<ListPage> {
    for (;;) {
      try {
        return await this.listPage(this.query(q));
      } catch (e) {
        if (!(e instanceof HttpStatusError) || e.status !== 404 || q.continue) throw e;
        if (this.pathIndex + 1 < this.o.paths.length) {
          this.pathIndex++;
          continue;
        }
        this.pathIndex = 0;
        throw new HttpStatusError(404, `not served by the API server (${this.o.paths.join(', ')}): is its CRD installed?`);
      }
    }
  }

  /**
   * The abort signal of one request: aborted when the reflector stops, when `limitMs` pass with no
   * byte (then `silent` is true), or by `abort()`. `dispose()` when the request is over.
   */
  private guard(limitMs: number): RequestGuard {
    const abort = new AbortController();
    const onStop = (): void => abort.abort();
    this.stopper.signal.addEventListener('abort', onStop, { once: true });
    const g: RequestGuard = {
      signal: abort.signal,
      silent: false,
      poke: () => watchdog.poke(),
      abort: () => abort.abort(),
      dispose: () => {
        watchdog.stop();
        abort.abort();
        this.stopper.signal.removeEventListener('abort', onStop);
      },
    };
    const watchdog = new SilenceWatchdog(limitMs, () => {
      g.silent = true;
      abort.abort();
    });
    watchdog.start();
    return g;
  }

  /** One list page, in protobuf when the kind names its fields and the server serves it so; given up (thrown) when no byte comes for the list silence limit. */
  private async listPage(path: string): Promise<ListPage> {
    const limitMs = Math.min(this.o.silentWatchMs, LIST_SILENCE_MS);
    const g = this.guard(limitMs);
    const schema = this.protobuf;
    try {
      const res = await this.o.client.get(path, g.signal, schema === null ? 'application/json' : `${PROTOBUF_CONTENT_TYPE}, application/json`);
      const body = await readBytes(res, g.poke);
      if (res.statusCode !== 200) throw new HttpStatusError(res.statusCode ?? 0, statusMessage(res.statusCode ?? 0, body, res.headers['content-type']));
      if (schema === null || !res.headers['content-type']?.startsWith(PROTOBUF_CONTENT_TYPE)) return JSON.parse(body.toString('utf8')) as ListPage;
      return decodeProtobufList(body, schema) as ListPage;
    } catch (e) {
      if (g.silent) throw new Error(`list request got no byte for ${limitMs / 1000}s`, { cause: e });
      if (e instanceof ProtobufError) {
        // Lists cost more in JSON, but one the reflector can read beats one it cannot, forever.
        this.protobuf = null;
        throw new Error(`${e.message}: listing ${this.kind} in JSON from now on`, { cause: e });
      }
      throw e;
    } finally {
      g.dispose();
    }
  }

  /** One watch request, until it ends; says why it ended. Throws on errors. */
  private async watch(): Promise<RestartReason> {
    const g = this.guard(this.o.silentWatchMs);
    let expired = false;
    try {
      // The server ends a healthy watch after timeoutSeconds, so a watch silent for twice that is dead.
      const timeoutSeconds = Math.max(1, Math.floor(this.o.silentWatchMs / 2000));
      const res = await this.o.client.get(
        this.query({ watch: '1', resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) }),
        g.signal,
      );
      if (res.statusCode === 410) {
        res.resume();
        return 'expired';
      }
      if (res.statusCode !== 200) {
        const body = await readBody(res);
        throw new HttpStatusError(res.statusCode ?? 0, statusMessage(res.statusCode ?? 0, body));
      }
      this.recovered();
      res.setEncoding('utf8');
      let rest = '';
      let events = 0;
      for await (const chunk of res) {
        g.poke();
        rest += chunk as string;
        // Lines are cut out by index and the unfinished tail kept once per chunk: slicing the rest
        // after every line would copy a burst of N events N times.
        let from = 0;
        let nl: number;
        let changed = false;
        try {
          while ((nl = rest.indexOf('\n', from)) >= 0) {
            const line = rest.slice(from, nl);
            from = nl + 1;
            if (!line.trim()) continue;
            if (events++ === 0) this.backoff.reset();
            const outcome = this.watchEvent(JSON.parse(line) as WatchEvent);
            if (outcome === 'expired') {
              expired = true;
              g.abort();
              break;
            }
            changed ||= outcome === 'changed';
          }
        } finally {
          // Whatever ends the chunk early (an ERROR event, a bad line), the events before it have
          // moved the resourceVersion on: they are served now, not with some later batch.
          if (changed) {
            this.stats.objects = this.known.size;
            this.o.onBatch();
          }
        }
        rest = rest.slice(from);
        if (expired) break;
      }
      return expired ? 'expired' : g.silent ? 'silent' : 'closed';
    } catch (e) {
      if (expired) return 'expired';
      if (g.silent) return 'silent';
      if (this.stopped) return 'closed';
      throw e;
    } finally {
      g.dispose();
    }
  }

  /** One watch event: delivered (changed), nothing to deliver (same), or a 410 (expired). Throws on other ERRORs. */
  private watchEvent(ev: WatchEvent): 'changed' | 'same' | 'expired' {
    this.stats.lastActivity = Date.now();
    if (ev.type === 'ERROR') {
      if (ev.object.code === 410) return 'expired';
      throw new HttpStatusError(ev.object.code ?? 0, `watch ERROR event: ${ev.object.message ?? ev.object.reason ?? 'unknown'}`);
    }
    const rv = ev.object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (ev.type === 'BOOKMARK') return 'same';
    const change = this.known.watched(ev.type, ev.object);
    if (change === null) return 'same';
    this.o.onChange(change, ev.object, true);
    return 'changed';
  }
}
