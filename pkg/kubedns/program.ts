// Wires the kube-dns pieces together: source → store → zone → answers, config → upstreams,
// the DNS server, and the HTTP endpoints. cmd/kube-dns only turns flags into these options.

import { hostname } from 'node:os';
import { AnswerCache } from '../dns/answer-cache.ts';
import { DnsServer } from '../dns/server.ts';
import { ClusterStore } from '../cluster/store.ts';
import { CLUSTER_KINDS, NODE_WATCH } from '../cluster/kinds.ts';
import type { ConfigMapInfo } from '../cluster/model.ts';
import type { Source } from '../source/source.ts';
import { KubernetesSource } from '../source/kubernetes.ts';
import { registerKubernetesSourceMetrics } from '../source/kubernetes-metrics.ts';
import { Zone } from '../zone/zone.ts';
import type { PodRecordsMode } from '../zone/zone.ts';
import { cacheJSON } from '../zone/cache-json.ts';
import { Forwarder } from '../forward/forward.ts';
import { ConfigDirWatcher, parseConfig, emptyConfig } from '../config/config.ts';
import type { KubeDnsConfig } from '../config/config.ts';
import { createLogger } from '../log/log.ts';
import { Resolver } from './resolver.ts';
import { applyUpstreams } from './upstreams.ts';
import { createKubeDnsMetrics } from './metrics.ts';
import { createHttpEndpoints } from './http.ts';

export interface KubeDnsOptions {
  domain: string;
  ttl: number;
  podRecords: PodRecordsMode;
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
  version: string;
}

export interface RunningKubeDns {
  dnsPort: number;
  httpPort: number;
  close(): Promise<void>;
}

export async function runKubeDns(o: KubeDnsOptions): Promise<RunningKubeDns> {
  const log = createLogger('kube-dns');
  const metrics = createKubeDnsMetrics();
  const zone = new Zone({ domain: o.domain, ttl: o.ttl, podRecords: o.podRecords });
  const forwarder = new Forwarder({ log: log.child('forward') });
  let server: DnsServer | null = null;

  let config: KubeDnsConfig = emptyConfig();
  let configMapInvalid = 0;
  let configWatcher: ConfigDirWatcher | null = null;
  const flagFederations: ReadonlyMap<string, string> = o.federations ?? new Map();
  const federations = (): ReadonlyMap<string, string> => (config.federations.size > 0 ? config.federations : flagFederations);
  const configure = (next: KubeDnsConfig, origin: string): void => {
    const before = [...federations()].join();
    config = next;
    log.info('configuration loaded', { from: origin });
    if ([...federations()].join() !== before) {
      // Names answered (or refused) before the change may sit in the answer cache.
      server?.invalidate();
      log.info('federations in use', { federations: [...federations()].map(([n, d]) => `${n}=${d}`).join(',') || 'none' });
    }
    if (federations().size > 0) o.source.watch?.(NODE_WATCH);
    applyUpstreams(forwarder, config, { flagNameservers: o.nameservers, resolvConf: o.resolvConf, zone, log }).catch((err) =>
      log.error('applying upstreams failed', { error: err }),
    );
  };

  const store: ClusterStore = new ClusterStore({
    servicesChanged(keys) {
      const touched = zone.updateServices([...keys].map((k) => [k, store.services.get(k) ?? null, store.endpointSets(k)]));
      // Only the answers the change touched are dropped: the rest of the cache keeps its hits.
      server?.invalidate(touched);
      log.debug(2, 'records rebuilt', { services: keys.size, serial: zone.serial });
    },
    configMapChanged(cm: ConfigMapInfo | null, name, namespace) {
      if (!o.configMap || name !== o.configMap || namespace !== o.configMapNamespace) return;
      try {
        configure(cm ? parseConfig(cm.data) : emptyConfig(), `ConfigMap ${namespace}/${name}`);
      } catch (err) {
        configMapInvalid++;
        log.warn('invalid configuration, ignoring update', { configMap: `${namespace}/${name}`, error: err });
      }
    },
    rejected(kind, problem) {
      metrics.objectRejected(kind);
      log.warn('cluster object skipped', { kind, problem });
    },
    synced() {
      log.info('initial sync done: serving the cluster zone', { ...store.counts(), serial: zone.serial });
    },
  }, CLUSTER_KINDS);
  if (o.source instanceof KubernetesSource) registerKubernetesSourceMetrics(metrics.registry, o.source);
  metrics.setStateReader(() => ({
    synced: store.hasSynced,
    ...zone.counts(),
    serial: zone.serial,
    configInvalid: configMapInvalid + (configWatcher?.stats.invalidUpdates ?? 0),
  }));

  const federation = {
    federations,
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
  const resolver = new Resolver({ zone, federation, forwarder, isSynced: () => store.hasSynced, version: `kube-dns-ts ${o.version}`, hostname: hostname(), log: log.child('resolver'), onSystem: metrics.onSystem });
  const answers = new AnswerCache({ maxBytes: o.answerCacheBytes });
  metrics.setAnswerCacheReader(() => answers);
  server = new DnsServer({ handler: resolver.handle, address: o.dnsBindAddress, port: o.dnsPort, observer: metrics.observer, answerCache: answers });

  if (o.configDir) {
    configWatcher = new ConfigDirWatcher(o.configDir, o.configPeriodMs, (cfg) => configure(cfg, `--config-dir ${o.configDir}`), log.child('config'));
    configWatcher.start();
  } else {
    configure(emptyConfig(), o.nameservers.length > 0 ? '--nameservers' : 'defaults');
  }

  const bound = await server.listen();
  log.info('DNS listening', { address: bound.address, port: bound.port, domain: o.domain });
  const httpState = { isSynced: () => store.hasSynced, cache: () => cacheJSON(zone.root, zone.domain, zone.ttl), registry: metrics.registry };
  const http = createHttpEndpoints(httpState);
  const httpPort = await http.listen(o.httpBindAddress, o.healthzPort);
  log.info('HTTP listening', { address: o.httpBindAddress, port: httpPort, paths: '/readiness,/healthz,/cache,/metrics' });
  const extra = o.prometheusPort ? createHttpEndpoints(httpState) : null;
  if (extra) log.info('HTTP listening', { address: o.httpBindAddress, port: await extra.listen(o.httpBindAddress, o.prometheusPort!), from: 'PROMETHEUS_PORT' });

  if (federations().size > 0) o.source.watch?.(NODE_WATCH);
  log.info('reading cluster objects', { source: o.source.describe() });
  await o.source.start(store);
  // A slow first sync never kills the process (the original's "Timeout waiting for initialization"
  // crash loop): stay unready, keep trying, and say so.
  const syncWatch = setInterval(() => {
    if (store.hasSynced) clearInterval(syncWatch);
    else log.warn('still waiting for the first sync; not ready, cluster names answer SERVFAIL', { source: o.source.describe() });
  }, o.initialSyncTimeoutMs);
  syncWatch.unref();

  return {
    dnsPort: bound.port,
    httpPort,
    async close() {
      clearInterval(syncWatch);
      configWatcher?.stop();
      await o.source.stop();
      await server!.close();
      await http.close();
      await extra?.close();
      await forwarder.close();
    },
  };
}
