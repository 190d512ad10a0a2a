// kube-dns as one named object: source → store → zone → answers, config → upstreams, the DNS
// server, and the HTTP endpoints, started and stopped together. cmd/kube-dns only turns flags into
// these options.

import { inZone } from '../dns/names.ts';
import { AnswerCache } from '../dns/answer-cache.ts';
import { DnsServer } from '../dns/server.ts';
import type { CachePartition, Handler } from '../dns/server.ts';
import { DnsThreads, siblingModule, tcpConnectionsShare } from '../dnsthreads/threads.ts';
import { resolveWorkers } from '../dnsthreads/auto.ts';
import type { AutoWorkers, ThreadBudget } from '../dnsthreads/auto.ts';
import type { DnsCounters } from './dns-counters.ts';
import type { ThreadObserverArgs } from './thread-observer.ts';
import { ClusterStore } from '../cluster/store.ts';
import { clusterKinds, NODE, NODE_WATCH } from '../cluster/kinds.ts';
import type { ClusterKind } from '../cluster/kind.ts';
import { ServiceEntryNames } from '../serviceentry/names.ts';
import { serviceEntryKind } from '../serviceentry/kind.ts';
import { nodeKind, podKind } from '../autopath/kind.ts';
import { NodeAddresses } from '../autopath/node-addresses.ts';
import { PodNames } from './pod-names.ts';
import { describePolicy } from '../visibility/visibility.ts';
import { UpstreamSilence } from '../autopath/autopath.ts';
import { registerAutopathMetrics } from '../autopath/metrics.ts';
import { PodIndex, ipv4Number, ipv4Text } from '../autopath/pod-index.ts';
import type { Source } from '../source/source.ts';
import { KubernetesSource } from '../source/kubernetes.ts';
import { registerKubernetesSourceMetrics } from '../source/kubernetes-metrics.ts';
import { Zone } from '../zone/zone.ts';
import type { PodRecordsMode } from '../zone/zone.ts';
import { cacheJSON } from '../zone/cache-json.ts';
import type { CachePolicy } from '../dnscache/cache.ts';
import { chain } from '../dns/chain.ts';
import type { AnsweringPlugin } from '../corefile/answering.ts';
import { QueryLog } from '../querylog/querylog.ts';
import type { QueryLogBlock } from '../querylog/querylog.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import type { AnsweringMetrics } from '../corefile/answering-metrics.ts';
import { coreDnsServerName, registerCoreDnsMetrics, serviceKindOf } from './coredns-metrics.ts';
import { LoopDetector } from '../dnscache/loop.ts';
import { Forwarder } from '../forward/forward.ts';
import type { ForwarderOptions } from '../forward/forward.ts';
import { ConfigDirWatcher, ConfigMapSync, FixedConfig } from '../config/config.ts';
import type { ConfigSync, KubeDnsConfig } from '../config/config.ts';
import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import { Resolver, SERVICE_ENTRY_GROUPS } from './resolver.ts';
import { applyUpstreams } from './upstreams.ts';
import { createKubeDnsMetrics } from './metrics.ts';
import type { KubeDnsMetrics, KubeDnsState } from './metrics.ts';
import { createHttpEndpoints } from './http.ts';
import { fairShare } from '../fairshare/fairshare.ts';
import type { Fairness } from '../dns/fairness.ts';
import type { HttpEndpoints } from './http.ts';
import type { FederationContext } from './resolver.ts';

/** Whether the pod index holds a pod at `ip` (IPv4: what the index keeps) in `namespace`. */
function podIn(pods: PodIndex, ip: string, namespace: string): boolean {
  const n = ipv4Number(ip);
  return n > 0 && pods.namespaceOf(n) === namespace;
}

/**
 * --workers=auto's memory bound: RSS at one thread with 10,000 Services (142 MiB measured, bench:scale)
 * and what each more thread adds: 20 MiB (16 measured at start) and an answer cache of its own, up to
 * --cache-bytes (every thread holds what its clients ask: the kernel spreads clients, not names).
 */
export function kubeDnsThreadBudget(answerCacheBytes: number): ThreadBudget {
  return { baseBytes: 144 * 2 ** 20, perThreadBytes: 20 * 2 ** 20 + answerCacheBytes };
}

export interface KubeDnsOptions {
  domain: string;
  ttl: number;
  podRecords: PodRecordsMode;
  /** The only namespaces whose Services and pod records are answered (a Corefile's kubernetes `namespaces`); absent: all. */
  namespaces?: string[];
  /** An endpoint without a hostname is named by its pod (a Corefile's kubernetes `endpoint_pod_names`); absent: by its address. */
  endpointPodNames?: boolean;
  dnsBindAddress: string;
  dnsPort: number;
  httpBindAddress: string;
  healthzPort: number;
  /** Also serve the HTTP endpoints here (the original's PROMETHEUS_PORT, 10055 in its manifest). */
  prometheusPort: number | null;
  nameservers: string[];
  resolvConf: string;
  configDir: string;
  configPeriodMs: number;
  configMap: string;
  configMapNamespace: string;
  /** --federations (name → domain): used while the config (ConfigMap or --config-dir) sets none. */
  federations?: ReadonlyMap<string, string>;
  initialSyncTimeoutMs: number;
  source: Source;
  /** --cache-bytes: what the pre-encoded answers may take. */
  answerCacheBytes: number;
  /** --round-robin: rotate A/AAAA answers per reply. */
  roundRobin: boolean;
  /** Class CH answered by kube-dns itself (version.bind, hostname.bind), else forwarded (a Corefile: its chaos answers them). Default true. */
  answerChaos?: boolean;
  /** The largest UDP reply (a Corefile's bufsize); absent: 4096. */
  maxUdpSize?: number;
  /** --workers: threads answering DNS (pkg/dnsthreads); 0: auto (pkg/dnsthreads/auto.ts); absent: 1. */
  workers?: number;
  /** --fair-share-busy/--fair-share-floor (pkg/fairshare); null or absent: misses never shared. */
  fairShare?: { busyAt: number; floorPerSecond: number } | null;
  /** --service-entries: answer the hosts of Istio ServiceEntries. */
  serviceEntries?: boolean;
  /** A Corefile's kubernetes `fallthrough` for the cluster zone (ResolverOptions.clusterFallthrough). */
  clusterFallthrough?: boolean;
  /** --autopath: answer a pod's whole search walk at its first query (watches Pods). */
  autopath?: boolean;
  /** Watches Pods without autopath too: a Corefile's `visibility` block needs the askers' namespaces. */
  watchAskers?: boolean;
  version: string;
  /** Where the configuration comes from instead of --config-dir, --config-map or the defaults (a Corefile's blocks). */
  configSync?: ConfigSync;
  /** The HTTP endpoints' addresses instead of --http-bind-address with --healthz-port and PROMETHEUS_PORT (a Corefile's health, ready, prometheus). */
  httpListeners?: { host: string; port: number }[];
  /** How names outside the cluster are forwarded (a Corefile's forward, cache, loop); absent: as kube-dns's flags say. */
  forwarding?: ForwardingOptions;
  /** Also export CoreDNS's metrics, for this server block (a Corefile). */
  coreDnsMetrics?: { zone: string; plugins: readonly string[]; answering: AnsweringMetrics };
  /** A query log line per reply, as CoreDNS's `log` writes it (a Corefile's log rules, by server block). */
  queryLog?: QueryLogBlock[];
  /**
   * Handlers that answer before kube-dns's own, in a Corefile's order (the cluster block's any,
   * chaos, rewrite, hosts); each closed at stop(). They see the names of `servedBeforeZone` ('' every
   * name) but those of a stub domain (another block's, in CoreDNS); one with `zones`, those zones'.
   */
  servedBefore?: ServedBefore[];
  servedBeforeZone?: string;
}

/** A plugin that answers before kube-dns's own (a Corefile's), closed when replaced or at stop(). */
export type ServedBefore = AnsweringPlugin;

export interface ForwardingOptions {
  /** The Forwarder's options (a Corefile's forward). */
  settings: Omit<ForwarderOptions, 'log'>;
  /** Forwarded replies kept under this policy; null: none kept. */
  cache: CachePolicy | null;
  /** Answers kept at most (the cache's capacities); null: only --cache-bytes bounds them. */
  cacheEntries: number | null;
  /** Probe the upstreams for a loop back to us; one that loops is taken off the route. */
  loopDetect: boolean;
}

/** What the metrics read (KubeDnsState), and where the configuration comes from. */
export interface KubeDnsStatus extends KubeDnsState {
  configFrom: string;
}

export class KubeDns {
  private readonly o: KubeDnsOptions;
  private readonly log: Logger;
  private readonly metrics: KubeDnsMetrics;
  private readonly zone: Zone;
  /** Pod addresses → namespaces, when Pods are watched (autopath, `pods verified`): the askers' namespaces. */
  private readonly pods: PodIndex | null;
  private readonly forwarder: Forwarder;
  private readonly loop: LoopDetector | undefined;
  private readonly store: ClusterStore;
  private readonly configSync: ConfigSync;
  private readonly server: DnsServer;
  private readonly handler: Handler;
  private readonly resolver: Resolver;
  private readonly resolverHandler: Handler;
  /** A Corefile's plugins before kube-dns's own, and their chain ending in the resolver. */
  private servedBefore: readonly ServedBefore[];
  private chained: Handler;
  /** The Corefile's plugins in force (coredns_plugin_enabled). */
  private corePlugins: readonly string[];
  private threads: DnsThreads | null = null;
  /** Misses shared between askers while this thread is busy (every thread's misses are answered here); null: never. */
  private readonly fairness: Fairness | null;
  private readonly workers: AutoWorkers;
  /** Each thread's answer cache budget (--cache-bytes / --workers). */
  private readonly http: HttpEndpoints[] = [];
  private config: KubeDnsConfig;
  /** `namespaces`: the exposed ones; null: all. */
  private readonly exposed: ReadonlySet<string> | null;
  /** The stub domains' zones in force (servedBefore skips their names). */
  private stubZones: readonly string[] = [];
  private syncWatch: NodeJS.Timeout | undefined;
  private lameDucking = false;

  constructor(o: KubeDnsOptions) {
    this.o = o;
    this.log = createLogger('kube-dns');
    this.metrics = createKubeDnsMetrics();
    // Pods are watched for autopath, for `pods verified` (a pod record answered only for a pod there)
    // and for a Corefile's visibility policy (the askers' namespaces).
    const pods = o.autopath || o.podRecords === 'verified' || o.watchAskers ? new PodIndex() : null;
    this.pods = pods;
    // The senders that name their asker in a Client Subnet: loopback (the pod's dnscache), and the
    // nodes (node-cache) once the Pod and Node watches have shown them; never a pod's own address.
    const nodes = new NodeAddresses(pods === null ? undefined : (ip) => pods.has(ip));
    this.exposed = o.namespaces === undefined ? null : new Set(o.namespaces);
    this.zone = new Zone({ domain: o.domain, ttl: o.ttl, podRecords: o.podRecords, namespaces: this.exposed ?? undefined, podAt: pods === null ? undefined : (ip, namespace) => podIn(pods, ip, namespace) });
    const fw = o.forwarding;
    this.forwarder = new Forwarder({ ...fw?.settings, log: this.log.child('forward') });
    this.loop = fw?.loopDetect ? new LoopDetector(this.forwarder, this.log.child('loop')) : undefined;
    this.configSync = this.makeConfigSync();
    this.config = this.configSync.current();
    const serviceEntries = o.serviceEntries ? new ServiceEntryNames() : null;
    // With pods known, Nodes too: the addresses node-cache's queries arrive from (optional, as Pods).
    const tableKinds = pods ? clusterKinds(o).map((k) => (k === NODE ? this.watch(nodeKind(k, nodes, (ip) => this.askerChanged(ip)), 'node-cache senders') : k)) : clusterKinds(o);
    const kinds = [...tableKinds, ...(serviceEntries ? [this.watchServiceEntries(serviceEntries)] : []), ...(pods ? [this.watch(podKind(pods, nodes, (ip) => this.askerChanged(ip)))] : [])];
    this.store = new ClusterStore(
      {
        servicesChanged: (keys) => this.servicesChanged(keys),
        configMapChanged: (cm, name, namespace) => {
          if (this.configSync instanceof ConfigMapSync) this.configSync.update(namespace, name, cm?.data ?? null);
        },
        rejected: (kind, problem) => {
          this.metrics.objectRejected(kind);
          this.log.warn('cluster object skipped', { kind, problem });
        },
        synced: () => this.log.info('initial sync done: serving the cluster zone', { ...this.store.counts(), serial: this.zone.serial }),
      },
      kinds,
    );
    if (o.source instanceof KubernetesSource) registerKubernetesSourceMetrics(this.metrics.registry, o.source, o.coreDnsMetrics ? { serviceKind: serviceKindOf(this.store) } : undefined);
    this.corePlugins = o.coreDnsMetrics?.plugins ?? [];
    this.metrics.setStateReader(() => this.status());
    const resolver = new Resolver({
      zone: this.zone,
      federation: this.federationContext(),
      forwarder: this.forwarder,
      isSynced: () => this.store.hasSynced,
      version: `kube-dns-ts ${o.version}`,
      answerChaos: o.answerChaos,
      clusterFallthrough: o.clusterFallthrough,
      log: this.log.child('resolver'),
      serviceEntries,
      trustsSubnetOf: nodes.trusts,
      visibility: () => this.config.visibility,
      pods,
      autopath: o.autopath !== true || pods === null ? null : { index: pods, counted: registerAutopathMetrics(this.metrics.registry, pods), silence: new UpstreamSilence() },
      forwardCache: fw?.cache ?? undefined,
      loop: this.loop,
    });
    if (o.coreDnsMetrics) {
      this.registerCoreDnsMetrics(o.coreDnsMetrics.zone, resolver);
      o.coreDnsMetrics.answering.register(this.metrics.registry);
    }
    if (serviceEntries !== null) this.metrics.setServiceEntryReader(() => serviceEntries.counts());
    this.workers = resolveWorkers(o.workers ?? 1, kubeDnsThreadBudget(o.answerCacheBytes));
    const workers = this.workers.workers;
    // --workers: every thread an answer cache of --cache-bytes, this one's among them (kubeDnsThreadBudget).
    const answers = new AnswerCache({ maxBytes: o.answerCacheBytes, maxEntries: fw?.cacheEntries ?? undefined });
    this.metrics.setAnswerCacheReader(() => answers);
    this.resolver = resolver;
    this.resolverHandler = resolver.handle;
    this.servedBefore = o.servedBefore ?? [];
    this.chained = this.chainOf(this.servedBefore);
    // One indirection, so that a Corefile's reload can put another chain in place (replacePlugins).
    this.handler = o.servedBefore === undefined ? resolver.handle : (q) => this.chained(q);
    const onReply = o.queryLog === undefined ? undefined : new QueryLog(o.queryLog).onReply;
    // The pod's dnscache (on loopback) and node-cache (from its node) name the pod they ask for in the Client Subnet.
    const describe = pods === null ? undefined : (ip: string): Record<string, string> => ({ namespace: pods.namespaceOf(ipv4Number(ip)) ?? '' });
    // From the API server, the limited asker's pod by name (the index keeps namespaces only).
    const podOf = pods !== null && o.source instanceof KubernetesSource ? new PodNames((path, ms) => (o.source as KubernetesSource).list(path, ms)).of : undefined;
    this.fairness = fairShare({ settings: o.fairShare ?? null, log: this.log, trustsSubnetOf: nodes.trusts, describe, podOf, metrics: { registry: this.metrics.registry, prefix: 'kubedns' } });
    const fairness = this.fairness ?? undefined;
    this.server = new DnsServer({ handler: this.handler, address: o.dnsBindAddress, port: o.dnsPort, observer: this.metrics.observer, onReply, answerCache: answers, roundRobin: o.roundRobin, maxUdpSize: o.maxUdpSize, reusePort: workers > 1 || fairness !== undefined, maxTcpConnections: tcpConnectionsShare(workers), fairness });
  }

  private chainOf(plugins: readonly ServedBefore[]): Handler {
    return chain(plugins.map((p) => this.scoped(p.handler, p.zones ?? null, this.o.servedBeforeZone ?? '')), this.resolverHandler);
  }

  /**
   * A Corefile's reload that changed the plugins answering before kube-dns's own: the new ones take
   * over at once, the old are closed, and every cached answer is dropped (it may be the old ones').
   */
  replacePlugins(plugins: ServedBefore[], names: readonly string[], forwardCache?: CachePolicy): void {
    const old = this.servedBefore;
    this.resolver.setForwardCache(forwardCache);
    this.servedBefore = plugins;
    this.chained = this.chainOf(plugins);
    this.corePlugins = names;
    this.invalidate();
    for (const p of old) p.close();
    this.log.info('Corefile plugins replaced', { plugins: names.join(',') });
  }

  /**
   * `handler` for the names of its block: `zones` when given, else those of `blockZone` that no stub
   * domain holds. The rest go on.
   */
  private scoped(handler: ChainedHandler, zones: readonly string[] | null, blockZone: string): ChainedHandler {
    if (zones !== null) return (q, next) => (zones.some((z) => inZone(z, q.qname)) ? handler(q, next) : next(q));
    return (q, next) => (inZone(blockZone, q.qname) && !this.stubZones.some((z) => inZone(z, q.qname)) ? handler(q, next) : next(q));
  }

  /** CoreDNS's names for what this process counts (a Corefile's server block). */
  private registerCoreDnsMetrics(blockZone: string, resolver: Resolver): void {
    const o = this.o;
    const v6 = o.dnsBindAddress.includes(':');
    registerCoreDnsMetrics(this.metrics.registry, {
      server: coreDnsServerName(o.dnsBindAddress, o.dnsPort),
      zone: blockZone === '' ? '.' : `${blockZone}.`,
      family: v6 ? 2 : 1,
      plugins: () => this.corePlugins,
      version: o.version,
      counters: () => this.metrics.totals(),
      reloadFailed: () => this.configSync.invalidUpdates,
      upstreams: () => this.forwarder.replyStats(),
      overloaded: () => this.forwarder.stats.overloaded,
      healthcheckBroken: () => this.forwarder.stats.healthcheckBroken,
      staleServed: () => resolver.staleServed(),
      timedCaches: () => this.metrics.timedCaches(),
    });
  }

  /** Under a visibility policy, the answer cache split by the asker's namespace (Resolver.askerPartition). */
  private cachePartition(): CachePartition | null {
    return this.config.visibility === null ? null : this.resolver.askerPartition;
  }

  /**
   * The pod watch changed the namespace at `ip`, or a node appeared there (null: any address, a
   * relist): the other threads forget the partition they learned for it (this one reads it afresh).
   */
  private askerChanged(ip: number | null): void {
    if (this.config.visibility !== null) this.threads?.askerChanged(ip === null ? null : ipv4Text(ip));
  }

  /** What a change dropped, in this thread's answer cache and every other thread's. */
  private invalidate(groups?: Iterable<string>): void {
    this.server?.invalidate(groups);
    this.threads?.invalidate(groups);
  }

  /** --workers: the other threads on the port this one bound; their misses answered here. */
  private async startThreads(bound: { address: string; port: number }): Promise<void> {
    const o = this.o;
    const workers = this.workers.workers;
    if (workers <= 1) return;
    this.threads = new DnsThreads({
      count: workers - 1,
      listen: [bound],
      answerCacheBytes: o.answerCacheBytes,
      roundRobin: o.roundRobin,
      maxUdpSize: o.maxUdpSize,
      handler: this.handler,
      fairness: this.fairness ?? undefined,
      servers: [this.server],
      observerModule: siblingModule(import.meta.url, 'thread-observer').href,
      observerArgs: { queryLog: o.queryLog } satisfies ThreadObserverArgs,
      log: this.log,
    });
    this.threads.partitionCache(this.cachePartition());
    const threads = this.threads;
    this.metrics.setThreadStats(async () => (await threads.stats()).map((s) => ({ counters: s.observed as DnsCounters, cache: s.cache })));
    await threads.start();
  }

  /** Serves DNS and HTTP, then starts reading the cluster; resolves with the ports bound. */
  async start(): Promise<{ dnsPort: number; httpPort: number }> {
    const o = this.o;
    let announced = false;
    this.configSync.start((config) => {
      announced = true;
      this.configure(config);
    });
    if (!announced) this.configure(this.configSync.current());
    const bound = await this.server.listen();
    await this.startThreads(bound);
    this.log.info('DNS listening', { address: bound.address, port: bound.port, domain: o.domain, threads: this.workers.workers, threadsBy: this.workers.why });
    const listeners = o.httpListeners ?? [{ host: o.httpBindAddress, port: o.healthzPort }, ...(o.prometheusPort ? [{ host: o.httpBindAddress, port: o.prometheusPort }] : [])];
    let httpPort = 0;
    for (const l of listeners) {
      const port = await this.serveHttp(l.host, l.port);
      httpPort ||= port;
      this.log.info('HTTP listening', { address: l.host, port, paths: '/readiness,/healthz,/health,/ready,/cache,/metrics' });
    }
    this.log.info('reading cluster objects', { source: o.source.describe() });
    await o.source.start(this.store);
    // A slow first sync never kills the process (the original's "Timeout waiting for initialization"
    // crash loop): stay unready, keep trying, and say so.
    this.syncWatch = setInterval(() => {
      if (this.store.hasSynced) clearInterval(this.syncWatch);
      else this.log.warn('still waiting for the first sync; not ready, cluster names answer SERVFAIL', { source: o.source.describe() });
    }, o.initialSyncTimeoutMs);
    this.syncWatch.unref();
    return { dnsPort: bound.port, httpPort };
  }

  /** The Services (`namespace/name`) with an endpoint at one of `addresses` (this pod's), as last watched. */
  servicesAt(addresses: ReadonlySet<string>): string[] {
    return this.store.servicesWith(addresses);
  }

  /** SIGTERM's first step: /readiness fails from now on; DNS answers as before until stop(). */
  lameDuck(): void {
    this.lameDucking = true;
  }

  /** Stops reading, answers what is in flight, closes every socket. */
  async stop(): Promise<void> {
    clearInterval(this.syncWatch);
    this.configSync.stop();
    await this.o.source.stop();
    await Promise.all([this.server.close(), this.threads?.stop()]);
    this.fairness?.close();
    for (const h of this.http) await h.close();
    await this.forwarder.close();
    for (const p of this.servedBefore) p.close();
  }

  status(): KubeDnsStatus {
    return { synced: this.store.hasSynced, ...this.zone.counts(), serial: this.zone.serial, configInvalid: this.configSync.invalidUpdates, configFrom: this.configSync.describe() };
  }

  /** --service-entries: the kind, watched from the start by the API source (optional: readiness never waits for it). */
  private watchServiceEntries(names: ServiceEntryNames): ClusterKind {
    const kind = serviceEntryKind(names, {
      changed: () => this.invalidate(SERVICE_ENTRY_GROUPS),
      rejected: (problem) => {
        this.metrics.objectRejected('ServiceEntry');
        this.log.warn('ServiceEntry skipped', { problem });
      },
    });
    return this.watch(kind);
  }

  /** An optional kind, watched from the start by the API source (readiness never waits for it). */
  private watch(kind: ClusterKind, why?: string): ClusterKind {
    this.o.source.watch?.({ kind, why });
    return kind;
  }

  /** --config-dir (the mounted ConfigMap), else --config-map (through the API), else the defaults. */
  private makeConfigSync(): ConfigSync {
    const o = this.o;
    if (o.configSync) return o.configSync;
    if (o.configDir) return new ConfigDirWatcher(o.configDir, o.configPeriodMs, this.log.child('config'));
    if (o.configMap) return new ConfigMapSync(o.configMapNamespace, o.configMap, this.log.child('config'));
    return new FixedConfig(o.nameservers.length > 0 ? '--nameservers' : 'defaults');
  }

  private federations(): ReadonlyMap<string, string> {
    return this.config.federations.size > 0 ? this.config.federations : (this.o.federations ?? new Map());
  }

  private configure(next: KubeDnsConfig): void {
    const before = [...this.federations()].join();
    const policyBefore = JSON.stringify(describePolicy(this.config.visibility));
    const policy = JSON.stringify(describePolicy(next.visibility));
    this.config = next;
    this.stubZones = [...next.stubDomains.keys()];
    this.log.info('configuration loaded', { from: this.configSync.describe() });
    // Under a policy the zone's answers to direct askers hold per namespace: the cache split by it.
    this.server.partitionCache(this.cachePartition());
    this.threads?.partitionCache(this.cachePartition());
    if (policy !== policyBefore) {
      // Answers kept under the old policy (or before there was one) must not outlive it.
      this.invalidate();
      this.log.info('visibility policy in force', { policy: next.visibility === null ? 'none' : policy, askersKnown: this.pods !== null });
    }
    if ([...this.federations()].join() !== before) {
      // Names answered (or refused) before the change may sit in the answer cache.
      this.invalidate();
      this.log.info('federations in use', { federations: [...this.federations()].map(([n, d]) => `${n}=${d}`).join(',') || 'none' });
    }
    if (this.federations().size > 0) this.o.source.watch?.(NODE_WATCH);
    const { nameservers: flagNameservers, resolvConf } = this.o;
    applyUpstreams(this.forwarder, next, { flagNameservers, resolvConf, zone: this.zone, log: this.log })
      .then((upstreams) => this.loop?.probe(upstreams))
      .catch((err) => this.log.error('applying upstreams failed', { err }));
  }

  private servicesChanged(keys: ReadonlySet<string>): void {
    // A Service of a namespace not exposed is published as none.
    const shown = (k: string) => this.exposed === null || this.exposed.has(k.slice(0, k.indexOf('/')));
    const touched = this.zone.updateServices([...keys].map((k) => [k, shown(k) ? (this.store.services.get(k) ?? null) : null, this.store.endpointSets(k)]));
    // Only the answers the change touched are dropped: the rest of the cache keeps its hits.
    this.invalidate(touched);
    this.log.debug(2, 'records rebuilt', { services: keys.size, serial: this.zone.serial });
  }

  private federationContext(): FederationContext {
    const { store, zone } = this;
    return {
      federations: () => this.federations(),
      hasEndpoints(namespace: string, service: string): boolean {
        const key = `${namespace}/${service}`;
        const svc = store.services.get(key);
        if (!svc) return false;
        // ClusterIP: an endpoint somewhere (the original: an Endpoints object with a subset).
        if (svc.kind === 'ClusterIP') return store.endpointSets(key).some((s) => s.endpoints.length > 0);
        // Headless and ExternalName: the service publishes a record.
        return zone.publishes(key);
      },
      topology: () => store.topology(),
    };
  }

  private async serveHttp(host: string, port: number): Promise<number> {
    const http = createHttpEndpoints({ isSynced: () => this.store.hasSynced, isLameDuck: () => this.lameDucking, cache: () => cacheJSON(this.zone.root, this.zone.domain, this.zone.ttl), metrics: { contentType: this.metrics.registry.contentType, render: () => this.metrics.render() } });
    this.http.push(http);
    return http.listen(host, port);
  }
}
