// Given a Corefile, kube-dns also exports CoreDNS's metrics under CoreDNS's names, read from the same
// counters when Prometheus scrapes, so the dashboards and alerts written for CoreDNS (the coredns
// mixin of kube-prometheus) read us unchanged: requests, responses and their duration per server and
// zone, forwarding per upstream, reload failures, the plugins in force, the build.

import type { Registry } from '../metrics/registry.ts';
import { timedSlot } from '../dns/answer-cache.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import { rcodeName, Type, typeName } from '../dns/constants.ts';
import { formatUpstream } from '../forward/forward.ts';
import type { ReplyStats } from '../forward/forward.ts';
import { REPLY_RCODES } from '../forward/servers.ts';
import { REQUEST_SIZE_HELP, RESPONSE_SIZE_HELP } from '../metrics/coredns-sizes.ts';
import { collectedHistogram } from '../metrics/histogram.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import type { Labels } from '../metrics/mirror.ts';
import { OTHER_SLOT, PROTOS, RCODES, TRACKED_TYPES, TYPE_SLOTS } from './dns-counters.ts';
import type { DnsCounters } from './dns-counters.ts';
import { SYSTEMS } from './resolver.ts';
import type { ClusterStore } from '../cluster/store.ts';
import type { ServiceKindOf } from '../source/kubernetes-metrics.ts';

/** The types CoreDNS gives a label value of their own (plugin/pkg/dnstest's monitored types); the rest is "other". */
const COREDNS_TYPES = new Set<number>([Type.A, Type.AAAA, Type.MX, Type.SOA, Type.CNAME, Type.PTR, Type.TXT, Type.NS, Type.SRV, Type.AXFR, Type.IXFR, Type.ANY]);

export interface CoreDnsMetricsSource {
  /** `dns://<bind>:<port>`, as CoreDNS names a server. */
  server: string;
  /** The server block's zone, with its trailing dot (`.`). */
  zone: string;
  /** 1: IPv4, 2: IPv6 (the DNS address's family: every query arrives on it). */
  family: 1 | 2;
  /** The plugins the Corefile uses (coredns_plugin_enabled). */
  plugins: () => readonly string[];
  version: string;
  counters(): DnsCounters;
  reloadFailed(): number;
  upstreams(): ReplyStats[];
  /** Queries refused at max_concurrent. */
  overloaded(): number;
  /** Queries that found every upstream down. */
  healthcheckBroken(): number;
  /** Forwarded questions answered stale (the cache's serve_stale). */
  staleServed(): number;
  /** Every thread's answer cache's entries with a lifetime (AnswerCache.timed): the forwarded answers. */
  timedCaches(): AnswerCache['timed'][];
}

/** How CoreDNS names a server: `dns://` and its bind address (none: every address, `dns://:53`) and port. */
export function coreDnsServerName(bind: string, port: number): string {
  return `dns://${bind === '0.0.0.0' ? '' : bind.includes(':') ? `[${bind}]` : bind}:${port}`;
}

export function registerCoreDnsMetrics(registry: Registry, s: CoreDnsMetricsSource): void {
  const at = { server: s.server, zone: s.zone, view: '' };
  mirroredGauge(registry, { name: 'coredns_build_info', help: 'A metric with a constant 1 value labeled by version, revision, and goversion from which CoreDNS was built.', labelNames: ['version', 'revision', 'goversion'] }, () => [[{ version: s.version, revision: '', goversion: process.version }, 1]]);
  mirroredGauge(registry, { name: 'coredns_plugin_enabled', help: 'A metric that indicates whether a plugin is enabled on per server and zone basis.', labelNames: ['server', 'zone', 'view', 'name'] }, () => s.plugins().map((name) => [{ ...at, name }, 1] as const));
  mirroredCounter(registry, { name: 'coredns_dns_requests_total', help: 'Counter of DNS requests made per zone, protocol and family.', labelNames: ['server', 'zone', 'view', 'proto', 'family', 'type'] }, () => requests(s, at));
  mirroredCounter(registry, { name: 'coredns_dns_responses_total', help: 'Counter of response status codes.', labelNames: ['server', 'zone', 'view', 'rcode', 'plugin'] }, () => responses(s, at));
  collectedHistogram(registry, { name: 'coredns_dns_request_duration_seconds', help: 'Histogram of the time (in seconds) each request took per zone.' }, function* (): Iterable<readonly [Labels, DnsCounters['duration'], number]> {
    yield [at, s.counters().duration, 0];
  });
  const sizes = (name: string, help: string, pick: (c: DnsCounters) => DnsCounters['requestSize']) =>
    collectedHistogram(registry, { name, help }, function* (): Iterable<readonly [Labels, DnsCounters['requestSize'], number]> {
      const c = s.counters();
      for (let p = 0; p < PROTOS.length; p++) yield [{ ...at, proto: PROTOS[p] }, pick(c), p];
    });
  sizes('coredns_dns_request_size_bytes', REQUEST_SIZE_HELP, (c) => c.requestSize);
  sizes('coredns_dns_response_size_bytes', RESPONSE_SIZE_HELP, (c) => c.responseSize);
  mirroredCounter(registry, { name: 'coredns_reload_failed_total', help: 'Counter of the number of failed reload attempts.' }, () => [[{}, s.reloadFailed()]]);
  mirroredCounter(registry, { name: 'coredns_panics_total', help: 'A metrics that counts the number of panics.' }, () => [[{}, s.counters().handlerErrors]]);
  mirroredCounter(registry, { name: 'coredns_forward_requests_total', help: 'Counter of requests made per upstream.', labelNames: ['to'] }, () => s.upstreams().map((u) => [{ to: formatUpstream(u.server) }, u.queries] as const));
  mirroredCounter(registry, { name: 'coredns_forward_responses_total', help: 'Counter of responses received per upstream.', labelNames: ['to', 'rcode'] }, function* () {
    for (const u of s.upstreams()) for (let r = 0; r < REPLY_RCODES; r++) if (u.replies.total(r) > 0) yield [{ to: formatUpstream(u.server), rcode: rcodeName(r) }, u.replies.total(r)] as const;
  });
  collectedHistogram(registry, { name: 'coredns_forward_request_duration_seconds', help: 'Histogram of the time each request took.' }, function* (): Iterable<readonly [Labels, ReplyStats['replies'], number]> {
    for (const u of s.upstreams()) for (let r = 0; r < REPLY_RCODES; r++) if (u.replies.total(r) > 0) yield [{ to: formatUpstream(u.server), rcode: rcodeName(r) }, u.replies, r];
  });
  // The cache is the Corefile's on forwarded names (the cluster zone's is disabled, as kubeadm writes it): those answers' hits.
  const cached = { server: s.server, zones: s.zone, view: '' };
  const recursive = SYSTEMS.indexOf('recursive');
  const forwarded = () => s.counters().skydnsRequests[recursive];
  const hits = () => s.counters().forwardedCacheHits;
  mirroredCounter(registry, { name: 'coredns_cache_requests_total', help: 'The count of cache requests.', labelNames: ['server', 'zones', 'view'] }, () => [[cached, forwarded()]]);
  mirroredCounter(registry, { name: 'coredns_cache_hits_total', help: 'The count of cache hits.', labelNames: ['server', 'type', 'zones', 'view'] }, () => [[{ ...cached, type: 'success' }, hits()[0]], [{ ...cached, type: 'denial' }, hits()[1]]]);
  mirroredCounter(registry, { name: 'coredns_cache_misses_total', help: 'The count of cache misses. Deprecated, derive misses from cache hits/requests counters.', labelNames: ['server', 'zones', 'view'] }, () => [[cached, forwarded() - hits()[0] - hits()[1]]]);
  // Forwarded answers are the ones kept with a lifetime (the cluster's are kept until a change drops them).
  const timed = (pick: (t: AnswerCache['timed']) => number[]) => (['success', 'denial'] as const).map((type, d) => [{ ...cached, type }, sumSlot(s.timedCaches().map(pick), timedSlot(recursive, d === 1))] as const);
  mirroredGauge(registry, { name: 'coredns_cache_entries', help: 'The number of elements in the cache.', labelNames: ['server', 'type', 'zones', 'view'] }, () => timed((t) => t.entries));
  mirroredCounter(registry, { name: 'coredns_cache_evictions_total', help: 'The count of cache evictions.', labelNames: ['server', 'type', 'zones', 'view'] }, () => timed((t) => t.evictions));
  mirroredCounter(registry, { name: 'coredns_cache_prefetch_total', help: 'The number of times the cache has prefetched a cached item.', labelNames: ['server', 'zones', 'view'] }, () => [[cached, s.counters().prefetches]]);
  mirroredCounter(registry, { name: 'coredns_cache_served_stale_total', help: 'The number of requests served from stale cache entries.', labelNames: ['server', 'zones', 'view'] }, () => [[cached, s.staleServed()]]);
  mirroredCounter(registry, { name: 'coredns_forward_healthcheck_failures_total', help: 'Counter of the number of failed healthchecks.', labelNames: ['to'] }, () => s.upstreams().map((u) => [{ to: formatUpstream(u.server) }, u.healthcheckFailures] as const));
  mirroredCounter(registry, { name: 'coredns_forward_healthcheck_broken_total', help: 'Counter of the number of complete failures of the healthchecks.' }, () => [[{}, s.healthcheckBroken()]]);
  mirroredCounter(registry, { name: 'coredns_forward_max_concurrent_rejects_total', help: 'Counter of the number of queries rejected because the concurrent queries were at maximum.' }, () => [[{}, s.overloaded()]]);
}

/** `slot` of every thread's counts, summed. */
function sumSlot(counts: number[][], slot: number): number {
  let n = 0;
  for (const c of counts) n += c[slot] ?? 0;
  return n;
}

function* requests(s: CoreDnsMetricsSource, at: Labels): Iterable<readonly [Labels, number]> {
  const r = s.counters().responses;
  const family = String(s.family);
  for (let p = 0; p < PROTOS.length; p++) {
    const byType = new Map<string, number>();
    for (let slot = 0; slot < TYPE_SLOTS; slot++) {
      let n = 0;
      for (let rc = 0; rc < RCODES; rc++) n += r[(p * TYPE_SLOTS + slot) * RCODES + rc];
      if (n === 0) continue;
      const type = slot !== OTHER_SLOT && COREDNS_TYPES.has(TRACKED_TYPES[slot]) ? typeName(TRACKED_TYPES[slot]) : 'other';
      byType.set(type, (byType.get(type) ?? 0) + n);
    }
    for (const [type, n] of byType) yield [{ ...at, proto: PROTOS[p], family, type }, n];
  }
}

function* responses(s: CoreDnsMetricsSource, at: Labels): Iterable<readonly [Labels, number]> {
  const r = s.counters().responses;
  for (let rc = 0; rc < RCODES; rc++) {
    let n = 0;
    for (let i = rc; i < r.length; i += RCODES) n += r[i];
    if (n > 0) yield [{ ...at, rcode: rcodeName(rc), plugin: '' }, n];
  }
}

/**
 * CoreDNS's service kind of an EndpointSlice's Service, for coredns_kubernetes_dns_programming_duration_seconds:
 * null when the slice names no Service the store holds (CoreDNS skips those too).
 */
export function serviceKindOf(store: Pick<ClusterStore, 'services'>): ServiceKindOf {
  return (slice) => {
    const name = slice.metadata.labels?.['kubernetes.io/service-name'];
    const svc = name === undefined ? undefined : store.services.get(`${slice.metadata.namespace}/${name}`);
    if (svc === undefined || svc.kind === 'ExternalName') return null;
    return svc.kind === 'Headless' ? 'headless_with_selector' : 'cluster_ip';
  };
}
