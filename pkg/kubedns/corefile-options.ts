// A planned Corefile as kube-dns's options: what `kube-dns -conf FILE` runs with instead of its flags.
// The cluster's source (the Corefile's kubeconfig or endpoint, else the in-cluster service account) is
// the caller's to make.

import { cachePolicy } from '../corefile/plugins/cache.ts';
import type { HostsOptions } from '../corefile/plugins/hosts.ts';
import { anyHandler } from '../any/any.ts';
import { hostsHandler } from '../hosts/handler.ts';
import { rewriteHandler } from '../rewrite/handler.ts';
import { chaosHandler } from '../chaos/chaos.ts';
import { templateHandler } from '../template/handler.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import { cachedAfter } from './cache-capped.ts';
import { HostsTable } from '../hosts/table.ts';
import type { Logger } from '../log/log.ts';
import type { KubeDnsCorefile } from './corefile.ts';
import type { KubeDnsOptions } from './program.ts';

/** kube-dns's own answer cache budget (its --cache-bytes default). */
const ANSWER_CACHE_BYTES = 16 * 1024 * 1024;

/** `host:port` as CoreDNS writes an endpoint (`:8080`: every address) → where to listen. */
export function listenAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(address.slice(i + 1)) };
}

type ServedBefore = NonNullable<KubeDnsOptions['servedBefore']>[number];

/** A plugin after `cache` in CoreDNS's order: its replies' TTLs as that cache leaves them. */
const afterCache = (handler: ChainedHandler, cache: KubeDnsCorefile['cache']) => (cache === null ? handler : cachedAfter(handler, cache));

/** `hosts`: its table (the file re-read as it says) and its answers, before kube-dns's own. */
function hostsPlugin(h: HostsOptions, cache: KubeDnsCorefile['cache'], log: Logger): ServedBefore {
  const table = new HostsTable({ file: h.file, inline: h.inline, noReverse: h.noReverse, reloadMs: h.reloadMs, log: log.child('hosts') });
  return { handler: afterCache(hostsHandler(table, { zones: h.zones, ttl: h.ttl, fallthrough: h.fallthrough }), cache), close: () => table.close() };
}

/** The plugins that answer before kube-dns's own, in CoreDNS's order: any, chaos, rewrite, template, hosts (at start, and at every reload that changes them). */
export function corefileServedBefore(k: KubeDnsCorefile, log: Logger): ServedBefore[] {
  return [
    ...(k.any ? [{ handler: anyHandler, close: () => undefined }] : []),
    ...k.chaos.map((c) => ({ handler: chaosHandler(c.answers), close: () => undefined, zones: c.zones ?? undefined })),
    ...(k.rewrite.length > 0 ? [{ handler: rewriteHandler(k.rewrite), close: () => undefined }] : []),
    ...(k.template.length > 0 ? [{ handler: afterCache(templateHandler(k.template), k.cache), close: () => undefined }] : []),
    ...(k.hosts === null ? [] : [hostsPlugin(k.hosts, k.cache, log)]),
  ];
}

/** kube-dns's options for `k`, its source aside; `configSync` carries the routes and their reloads. */
export function corefileKubeDnsOptions(k: KubeDnsCorefile, configSync: KubeDnsOptions['configSync'], log: Logger): Omit<KubeDnsOptions, 'source' | 'version'> {
  const endpoints = [...new Set([k.health?.address, k.ready, k.metrics].filter((a): a is string => a !== null && a !== undefined))];
  return {
    domain: k.domain,
    ttl: k.ttl,
    podRecords: k.pods,
    namespaces: k.namespaces ?? undefined,
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
    clusterFallthrough: k.clusterFallthrough,
    queryLog: k.queryLog ?? undefined,
    configSync,
    coreDnsMetrics: { zone: k.clusterBlockZone, plugins: k.plugins },
    servedBefore: corefileServedBefore(k, log),
    servedBeforeZone: k.clusterBlockZone,
    forwarding: {
      settings: { ...k.forwarding, stubPolicies: k.stubPolicies },
      cache: k.cache === null ? null : cachePolicy(k.cache),
      cacheEntries: k.cache === null ? null : k.cache.successCapacity + k.cache.denialCapacity,
      loopDetect: k.loop,
    },
  };
}
