// kube-dns metrics. The DNS hot path only bumps plain numbers (DnsCounters); they reach the registry
// when Prometheus scrapes (collect), so a query costs no label hashing. With --workers the counts are
// the whole process's: refresh() adds every thread's before a scrape.

import { Registry } from '../metrics/registry.ts';
import { Counter } from '../metrics/metric.ts';
import { registerProcessMetrics } from '../metrics/process.ts';
import { rcodeName, typeName } from '../dns/constants.ts';
import type { ServerObserver } from '../dns/server.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import { collectedHistogram } from '../metrics/histogram.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import type { Labels } from '../metrics/mirror.ts';
import { DnsCounters, OTHER_SLOT, PROTOS, RCODES, TRACKED_TYPES, TYPE_SLOTS } from './dns-counters.ts';
import { registerSkyDnsMetrics } from './skydns-metrics.ts';
import type { ServiceEntryCounts } from '../serviceentry/names.ts';

export interface KubeDnsState {
  synced: boolean;
  services: number;
  ptrs: number;
  clusterIPs: number;
  serial: number;
  /** ConfigMap updates ignored as invalid, so far. */
  configInvalid: number;
}

export interface KubeDnsMetrics {
  registry: Registry;
  /** This thread's DnsServer's. */
  observer: ServerObserver;
  objectRejected(kind: string): void;
  /** Gauges read at scrape time. */
  setStateReader(read: () => KubeDnsState): void;
  /** The DNS server's answer cache, read at scrape time (the kubedns_answer_cache_* metrics). */
  setAnswerCacheReader(read: () => AnswerCache): void;
  /** --service-entries: what is answered for, read at scrape time (kubedns_service_entries). */
  setServiceEntryReader(read: () => ServiceEntryCounts): void;
  /** --workers: before a scrape, the other threads' counts (DnsCounters.snapshot()) and answer caches, to add to this one's. */
  setThreadStats(read: () => Promise<ThreadDnsStats[]>): void;
  /** Renders /metrics (the other threads' counts fetched first). */
  render(): Promise<string>;
  /** Every thread's answer cache's entries with a lifetime (AnswerCache.timed), as of the last render. */
  timedCaches(): AnswerCache['timed'][];
  /** The whole process's reply counts as of the last render (this thread's and every other's). */
  totals(): DnsCounters;
}

/** What another thread reports for the metrics: its reply counts and its answer cache. */
export interface ThreadDnsStats {
  counters: DnsCounters;
  cache: { entries: number; bytes: number; maxBytes: number; evictions: number; timed: AnswerCache['timed'] };
}

type CacheFigures = ThreadDnsStats['cache'];

/** Counters by a reason (malformed, dropped, TCP closes): a series per reason seen. */
function byReason(registry: Registry, name: string, help: string, read: () => Record<string, number>): void {
  mirroredCounter(registry, { name, help, labelNames: ['reason'] }, () => Object.entries(read()).map(([reason, n]) => [{ reason }, n] as const));
}

export function createKubeDnsMetrics(): KubeDnsMetrics {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const own = new DnsCounters();
  let total = own;
  let threadStats: (() => Promise<ThreadDnsStats[]>) | null = null;
  let threadCaches: CacheFigures[] = [];
  const read = () => total;
  registerSkyDnsMetrics(registry, read);

  mirroredCounter(registry, { name: 'kubedns_dns_responses_total', help: 'DNS responses sent, by query type, rcode and transport.', labelNames: ['type', 'rcode', 'proto'] }, function* () {
    const responses = read().responses;
    for (let i = 0; i < responses.length; i++) {
      if (responses[i] === 0) continue;
      const slot = Math.floor(i / RCODES) % TYPE_SLOTS;
      const type = slot === OTHER_SLOT ? 'other' : typeName(TRACKED_TYPES[slot]);
      yield [{ type, rcode: rcodeName(i % RCODES), proto: PROTOS[Math.floor(i / (TYPE_SLOTS * RCODES))] }, responses[i]] as const;
    }
  });
  mirroredCounter(registry, { name: 'kubedns_dns_answer_cache_hits_total', help: 'Responses served from pre-encoded answers.' }, () => [[{}, read().cacheHits]]);
  collectedHistogram(registry, { name: 'kubedns_dns_request_duration_seconds', help: 'Time from receiving a query to sending its response.' }, function* (): Iterable<readonly [Labels, DnsCounters['duration'], number]> {
    yield [{}, read().duration, 0];
  });
  byReason(registry, 'kubedns_dns_malformed_requests_total', 'Requests that could not be parsed, by reason.', () => read().malformed);
  byReason(registry, 'kubedns_dns_dropped_requests_total', 'Requests dropped without an answer, by reason.', () => read().dropped);
  mirroredCounter(registry, { name: 'kubedns_dns_truncated_responses_total', help: 'Responses sent with TC set.' }, () => [[{}, read().truncated]]);
  byReason(
    registry,
    'kubedns_dns_tcp_connections_closed_total',
    'TCP connections the server closed, by reason: idle, stalled (a query frame unfinished within 2 s of its first byte), evicted (room made for a new client at the connection cap).',
    () => read().tcpClosed,
  );
  mirroredCounter(registry, { name: 'kubedns_dns_handler_errors_total', help: 'Queries answered SERVFAIL because answering them failed unexpectedly.' }, () => [[{}, read().handlerErrors]]);
  const rejected = new Counter({ name: 'kubedns_cluster_objects_rejected_total', help: 'Cluster objects (or parts of them) skipped because DNS cannot use them, by kind.', labelNames: ['kind'], registers: [registry] });
  let readState: () => KubeDnsState = () => ({ synced: false, services: 0, ptrs: 0, clusterIPs: 0, serial: 0, configInvalid: 0 });
  mirroredCounter(registry, { name: 'kubedns_config_invalid_updates_total', help: 'ConfigMap updates ignored because they failed validation.' }, () => [[{}, readState().configInvalid]]);
  mirroredGauge(registry, { name: 'kubedns_synced', help: '1 once the first full view of the cluster has been loaded.' }, () => [[{}, readState().synced ? 1 : 0]]);
  mirroredGauge(registry, { name: 'kubedns_records', help: 'What the zone holds: services, reverse (PTR) addresses, cluster IPs.', labelNames: ['kind'] }, () => {
    const s = readState();
    return [
      [{ kind: 'services' }, s.services],
      [{ kind: 'ptr' }, s.ptrs],
      [{ kind: 'cluster_ip' }, s.clusterIPs],
    ];
  });
  mirroredGauge(registry, { name: 'kubedns_zone_serial', help: 'The SOA serial of the cluster zone (changes when records change).' }, () => [[{}, readState().serial]]);

  // Every thread's answer cache, summed (--workers: each holds up to --cache-bytes).
  let readCache: (() => AnswerCache) | null = null;
  const figures = (): CacheFigures[] => {
    if (readCache === null) return [];
    const own = readCache();
    return [{ entries: own.size, bytes: own.bytes, maxBytes: own.maxBytes, evictions: own.stats.evictions, timed: own.timed }, ...threadCaches];
  };
  const caches = (pick: (c: CacheFigures) => number): (readonly [Labels, number])[] => (readCache === null ? [] : [[{}, figures().reduce((n, c) => n + pick(c), 0)]]);
  const cacheGauge = (name: string, help: string, pick: (c: CacheFigures) => number) => mirroredGauge(registry, { name, help }, () => caches(pick));
  cacheGauge('kubedns_answer_cache_bytes', 'Memory the pre-encoded answers are counted as taking, against kubedns_answer_cache_max_bytes (--cache-bytes).', (c) => c.bytes);
  cacheGauge('kubedns_answer_cache_max_bytes', 'The answer caches\' budget: --cache-bytes for each thread, summed.', (c) => c.maxBytes);
  cacheGauge('kubedns_answer_cache_entries', 'Pre-encoded answers held.', (c) => c.entries);
  mirroredCounter(registry, { name: 'kubedns_answer_cache_evictions_total', help: 'Pre-encoded answers pushed out to stay within --cache-bytes.' }, () => caches((c) => c.evictions));

  return {
    registry,
    observer: own.observer,
    totals: read,
    objectRejected: (kind) => rejected.inc(1, { kind }),
    setStateReader(read) {
      readState = read;
    },
    timedCaches: () => figures().map((c) => c.timed),
    setAnswerCacheReader(read) {
      readCache = read;
    },
    setThreadStats(read) {
      threadStats = read;
    },
    async render() {
      if (threadStats !== null) {
        const stats = await threadStats();
        const sum = own.copy();
        for (const s of stats) sum.add(s.counters);
        [total, threadCaches] = [sum, stats.map((s) => s.cache)];
      }
      return registry.metrics();
    },
    setServiceEntryReader(read) {
      const help = 'With --service-entries: ServiceEntries answered for (kind="entries") and the hosts they name (kind="hosts"); those skipped are counted in kubedns_cluster_objects_rejected_total{kind="ServiceEntry"}.';
      mirroredGauge(registry, { name: 'kubedns_service_entries', help, labelNames: ['kind'] }, () => {
        const c = read();
        return [
          [{ kind: 'entries' }, c.entries],
          [{ kind: 'hosts' }, c.hosts],
        ];
      });
    },
  };
}
