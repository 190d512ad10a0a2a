// kube-dns metrics. The DNS hot path only bumps plain numbers; they reach prom-client when
// Prometheus scrapes (collect), so a query costs no label hashing.

import client from 'prom-client';
import { Type, rcodeName, typeName } from '../dns/constants.ts';
import type { ServerObserver } from '../dns/server.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import { FastHistogram } from '../metrics/histogram.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import { createSkyDnsMetrics } from './skydns-metrics.ts';
import type { ServiceEntryCounts } from '../serviceentry/names.ts';

/** Query types with their own label value; everything else is "other" (bounded cardinality). */
const TRACKED_TYPES = [Type.A, Type.AAAA, Type.SRV, Type.PTR, Type.CNAME, Type.TXT, Type.SOA, Type.NS, Type.MX, Type.ANY, Type.HINFO, Type.AXFR, Type.IXFR];
const TYPE_SLOT = new Map<number, number>(TRACKED_TYPES.map((t, i) => [t, i]));
const OTHER_SLOT = TRACKED_TYPES.length;
const RCODES = 24;
const PROTOS = ['udp', 'tcp'] as const;

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
  registry: client.Registry;
  observer: ServerObserver;
  objectRejected(kind: string): void;
  /** Gauges read at scrape time. */
  setStateReader(read: () => KubeDnsState): void;
  /** The DNS server's answer cache, read at scrape time (the kubedns_answer_cache_* metrics). */
  setAnswerCacheReader(read: () => AnswerCache): void;
  /** --service-entries: what is answered for, read at scrape time (kubedns_service_entries). */
  setServiceEntryReader(read: () => ServiceEntryCounts): void;
}

export function createKubeDnsMetrics(): KubeDnsMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const slots = OTHER_SLOT + 1;
  const responses = new Float64Array(PROTOS.length * slots * RCODES);
  let cacheHits = 0;
  const skydns = createSkyDnsMetrics(registry);

  mirroredCounter(registry, { name: 'kubedns_dns_responses_total', help: 'DNS responses sent, by query type, rcode and transport.', labelNames: ['type', 'rcode', 'proto'] }, function* () {
    for (let i = 0; i < responses.length; i++) {
      if (responses[i] === 0) continue;
      const slot = Math.floor(i / RCODES) % slots;
      const type = slot === OTHER_SLOT ? 'other' : typeName(TRACKED_TYPES[slot]);
      yield [{ type, rcode: rcodeName(i % RCODES), proto: PROTOS[Math.floor(i / (slots * RCODES))] }, responses[i]] as const;
    }
  });
  mirroredCounter(registry, { name: 'kubedns_dns_answer_cache_hits_total', help: 'Responses served from pre-encoded answers.' }, () => [[{}, cacheHits]]);
  const duration = new FastHistogram({
    name: 'kubedns_dns_request_duration_seconds',
    help: 'Time from receiving a query to sending its response.',
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const malformed = new client.Counter({ name: 'kubedns_dns_malformed_requests_total', help: 'Requests that could not be parsed, by reason.', labelNames: ['reason'], registers: [registry] });
  const dropped = new client.Counter({ name: 'kubedns_dns_dropped_requests_total', help: 'Requests dropped without an answer, by reason.', labelNames: ['reason'], registers: [registry] });
  const truncated = new client.Counter({ name: 'kubedns_dns_truncated_responses_total', help: 'Responses sent with TC set.', registers: [registry] });
  const tcpClosed = new client.Counter({
    name: 'kubedns_dns_tcp_connections_closed_total',
    help: 'TCP connections the server closed, by reason: idle, stalled (a query frame unfinished within 2 s of its first byte), evicted (room made for a new client at the connection cap).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const handlerErrors = new client.Counter({ name: 'kubedns_dns_handler_errors_total', help: 'Queries answered SERVFAIL because answering them failed unexpectedly.', registers: [registry] });
  const rejected = new client.Counter({ name: 'kubedns_cluster_objects_rejected_total', help: 'Cluster objects (or parts of them) skipped because DNS cannot use them, by kind.', labelNames: ['kind'], registers: [registry] });
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

  let readCache: (() => AnswerCache) | null = null;
  const cacheGauge = (name: string, help: string, pick: (c: AnswerCache) => number) =>
    mirroredGauge(registry, { name, help }, () => (readCache === null ? [] : [[{}, pick(readCache())]]));
  cacheGauge('kubedns_answer_cache_bytes', 'Memory the pre-encoded answers are counted as taking, against kubedns_answer_cache_max_bytes (--cache-bytes).', (c) => c.bytes);
  cacheGauge('kubedns_answer_cache_max_bytes', 'The answer cache budget (--cache-bytes).', (c) => c.maxBytes);
  cacheGauge('kubedns_answer_cache_entries', 'Pre-encoded answers held.', (c) => c.size);
  mirroredCounter(registry, { name: 'kubedns_answer_cache_evictions_total', help: 'Pre-encoded answers pushed out to stay within --cache-bytes.' }, () =>
    readCache === null ? [] : [[{}, readCache().stats.evictions]],
  );

  const observer: ServerObserver = {
    response(qtype, rcode, transport, seconds, fromCache, tag, size, truncated) {
      const slot = TYPE_SLOT.get(qtype) ?? OTHER_SLOT;
      responses[(transport === 'tcp' ? slots * RCODES : 0) + slot * RCODES + (rcode < RCODES ? rcode : RCODES - 1)]++;
      duration.observe(seconds);
      if (fromCache) cacheHits++;
      // By the system the answer was made under (the resolver's tag), from the cache too: a cached
      // CHAOS or REFUSED answer used to count as auth.
      skydns.response(tag, rcode, seconds, size, truncated, fromCache);
    },
    malformed: (reason) => malformed.inc({ reason }),
    dropped: (reason) => dropped.inc({ reason }),
    truncated: () => truncated.inc(),
    tcpClosed: (reason) => tcpClosed.inc({ reason }),
    handlerError: () => handlerErrors.inc(),
  };
  return {
    registry,
    observer,
    objectRejected: (kind) => rejected.inc({ kind }),
    setStateReader(read) {
      readState = read;
    },
    setAnswerCacheReader(read) {
      readCache = read;
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
