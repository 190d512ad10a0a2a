// A planned Corefile as kube-dns's options: what `kube-dns -conf FILE` runs with instead of its flags.
// The cluster's source (the Corefile's kubeconfig or endpoint, else the in-cluster service account) is
// the caller's to make.

import { answeringPlugins } from '../corefile/answering.ts';
import { AnsweringMetrics } from '../corefile/answering-metrics.ts';
import { cachePolicy } from '../corefile/plugins/cache.ts';
import type { CachePolicy } from '../dnscache/cache.ts';
import type { Logger } from '../log/log.ts';
import { coreDnsServerName } from './coredns-metrics.ts';
import type { KubeDnsCorefile } from './corefile.ts';
import type { CorefileSync } from './corefile-sync.ts';
import type { KubeDnsOptions, ServedBefore } from './program.ts';

/** kube-dns's own answer cache budget (its --cache-bytes default). */
const ANSWER_CACHE_BYTES = 16 * 1024 * 1024;

/** `host:port` as CoreDNS writes an endpoint (`:8080`: every address) → where to listen. */
export function listenAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(address.slice(i + 1)) };
}

/** The plugins that answer before kube-dns's own, in CoreDNS's order (at start, and at every reload that changes them). */
export function corefileServedBefore(k: KubeDnsCorefile, log: Logger, metrics: AnsweringMetrics): ServedBefore[] {
  return answeringPlugins(k, k.cache, log, { metrics, server: coreDnsServerName(k.bind ?? '0.0.0.0', k.port) });
}

/** The policy of what `k` forwards and keeps (its `cache`); undefined: nothing kept. At start, and at every reload that changes its zones. */
export function corefileForwardCache(k: KubeDnsCorefile): CachePolicy | undefined {
  return k.cache === null ? undefined : cachePolicy(k.cache);
}

/** kube-dns's options for `k`, its source aside; `configSync` carries the routes and their reloads. */
export function corefileKubeDnsOptions(k: KubeDnsCorefile, configSync: CorefileSync, log: Logger): Omit<KubeDnsOptions, 'source' | 'version'> {
  const endpoints = [...new Set([k.health?.address, k.ready, k.metrics].filter((a): a is string => a !== null && a !== undefined))];
  // hosts' and template's metrics, which this start's plugins and every reload's report into.
  const answering = new AnsweringMetrics();
  return {
    domain: k.domain,
    ttl: k.ttl,
    podRecords: k.pods,
    namespaces: k.namespaces ?? undefined,
    endpointPodNames: k.endpointPodNames,
    dnsBindAddress: k.bind ?? '0.0.0.0',
    dnsPort: k.port,
    httpBindAddress: '0.0.0.0',
    healthzPort: 0,
    prometheusPort: null,
    httpListeners: endpoints.map(listenAddress),
    nameservers: [],
    // The Corefile's forward is the only way out: without one, names outside the cluster fail (SERVFAIL), as in CoreDNS.
    resolvConf: '/dev/null',
    configDir: '',
    configPeriodMs: 0,
    configMap: '',
    configMapNamespace: '',
    initialSyncTimeoutMs: 60_000,
    answerCacheBytes: ANSWER_CACHE_BYTES,
    roundRobin: k.roundRobin,
    maxUdpSize: k.bufsize ?? undefined,
    // CH questions are chaos's to answer (when written), else forwarded, as in CoreDNS.
    answerChaos: false,
    workers: 0,
    autopath: k.autopath,
    watchAskers: k.visibility !== null,
    clusterFallthrough: k.clusterFallthrough,
    queryLog: k.queryLog ?? undefined,
    configSync,
    coreDnsMetrics: { zone: k.clusterBlockZone, plugins: k.plugins, answering },
    servedBefore: corefileServedBefore(k, log, answering),
    servedBeforeZone: k.clusterBlockZone,
    forwarding: {
      // A stub block's policy as the Corefile in force says (a reload may add or change one).
      settings: { ...k.forwarding, stubPolicy: (zone) => configSync.stubPolicy(zone) },
      cache: corefileForwardCache(k) ?? null,
      cacheEntries: k.cache === null ? null : k.cache.successCapacity + k.cache.denialCapacity,
      loopDetect: k.loop,
    },
  };
}
