// kube-dns metrics. The DNS hot path only bumps plain numbers; they reach prom-client when
// Prometheus scrapes (collect), so a query costs no label hashing.

import client from 'prom-client';
import { Type, rcodeName, typeName } from '../dns/constants.ts';
import type { ServerObserver } from '../dns/server.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import { SYSTEMS } from './resolver.ts';
import type { System } from './resolver.ts';
import { FastHistogram } from './histogram.ts';
import type { KubernetesSourceStatus } from '../source/kubernetes.ts';
import { RESTART_REASONS } from '../source/kubernetes-reflector.ts';

/** Query types with their own label value; everything else is "other" (bounded cardinality). */
const TRACKED_TYPES = [Type.A, Type.AAAA, Type.SRV, Type.PTR, Type.CNAME, Type.TXT, Type.SOA, Type.NS, Type.MX, Type.ANY, Type.HINFO, Type.AXFR, Type.IXFR];
const TYPE_SLOT = new Map<number, number>(TRACKED_TYPES.map((t, i) => [t, i]));
const OTHER_SLOT = TRACKED_TYPES.length;
const RCODES = 24;
const SYSTEM_SLOT = Object.fromEntries(SYSTEMS.map((s, i) => [s, i])) as Record<System, number>;
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
  onSystem(system: System): void;
  objectRejected(kind: string): void;
  /** Gauges read at scrape time. */
  setStateReader(read: () => KubeDnsState): void;
  /** The API source's numbers, read at scrape time (the kubedns_source_* metrics appear once set). */
  setSourceReader(read: () => KubernetesSourceStatus): void;
  /** Seconds from a cluster change to the zone serving it. */
  programmed(seconds: number): void;
  /** The DNS server's answer cache, read at scrape time (the kubedns_answer_cache_* metrics). */
  setAnswerCacheReader(read: () => AnswerCache): void;
}

export function createKubeDnsMetrics(): KubeDnsMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const slots = OTHER_SLOT + 1;
  const responses = new Float64Array(PROTOS.length * slots * RCODES);
  const flushedResponses = new Float64Array(responses.length);
  // Indexed by SYSTEMS: a cache hit bumps one slot, no Map lookup.
  const systems = new Float64Array(SYSTEMS.length);
  const flushedSystems = new Float64Array(SYSTEMS.length);
  let cacheHits = 0;
  let flushedCacheHits = 0;

  const responsesTotal = new client.Counter({
    name: 'kubedns_dns_responses_total',
    help: 'DNS responses sent, by query type, rcode and transport.',
    labelNames: ['type', 'rcode', 'proto'],
    registers: [registry],
    collect() {
      for (let i = 0; i < responses.length; i++) {
        const delta = responses[i] - flushedResponses[i];
        if (delta === 0) continue;
        flushedResponses[i] = responses[i];
        const proto = PROTOS[Math.floor(i / (slots * RCODES))];
        const slot = Math.floor(i / RCODES) % slots;
        const type = slot === OTHER_SLOT ? 'other' : typeName(TRACKED_TYPES[slot]);
        responsesTotal.inc({ type, rcode: rcodeName(i % RCODES), proto }, delta);
      }
    },
  });
  const cacheHitsTotal = new client.Counter({
    name: 'kubedns_dns_answer_cache_hits_total',
    help: 'Responses served from pre-encoded answers.',
    registers: [registry],
    collect() {
      cacheHitsTotal.inc(cacheHits - flushedCacheHits);
      flushedCacheHits = cacheHits;
    },
  });
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
  // The original's SkyDNS names, so existing dashboards keep working.
  const skydnsRequests = new client.Counter({
    name: 'skydns_skydns_dns_request_count_total',
    help: 'Counter of DNS requests made (original kube-dns name).',
    labelNames: ['system'],
    registers: [registry],
    collect() {
      for (let i = 0; i < SYSTEMS.length; i++) {
        const delta = systems[i] - flushedSystems[i];
        if (delta > 0) skydnsRequests.inc({ system: SYSTEMS[i] }, delta);
        flushedSystems[i] = systems[i];
      }
    },
  });
  const rejected = new client.Counter({ name: 'kubedns_cluster_objects_rejected_total', help: 'Cluster objects (or parts of them) skipped because DNS cannot use them, by kind.', labelNames: ['kind'], registers: [registry] });
  let readState: () => KubeDnsState = () => ({ synced: false, services: 0, ptrs: 0, clusterIPs: 0, serial: 0, configInvalid: 0 });
  let flushedConfigInvalid = 0;
  const configInvalid = new client.Counter({
    name: 'kubedns_config_invalid_updates_total',
    help: 'ConfigMap updates ignored because they failed validation.',
    registers: [registry],
    collect() {
      const n = readState().configInvalid;
      configInvalid.inc(n - flushedConfigInvalid);
      flushedConfigInvalid = n;
    },
  });
  const synced = new client.Gauge({ name: 'kubedns_synced', help: '1 once the first full view of the cluster has been loaded.', registers: [registry], collect() { synced.set(readState().synced ? 1 : 0); } });
  const records = new client.Gauge({
    name: 'kubedns_records',
    help: 'What the zone holds: services, reverse (PTR) addresses, cluster IPs.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const s = readState();
      records.set({ kind: 'services' }, s.services);
      records.set({ kind: 'ptr' }, s.ptrs);
      records.set({ kind: 'cluster_ip' }, s.clusterIPs);
    },
  });
  const serial = new client.Gauge({ name: 'kubedns_zone_serial', help: 'The SOA serial of the cluster zone (changes when records change).', registers: [registry], collect() { serial.set(readState().serial); } });

  let readSource: (() => KubernetesSourceStatus) | null = null;
  const sourceSynced = new client.Gauge({
    name: 'kubedns_source_synced',
    help: '1 once the API source has listed every kind once.',
    registers: [registry],
    collect() {
      if (readSource) sourceSynced.set(readSource().synced ? 1 : 0);
    },
  });
  const lastEventAge = new client.Gauge({
    name: 'kubedns_source_last_event_age_seconds',
    help: 'Seconds since the last list, watch event or bookmark, by kind.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const k of readSource?.().kinds ?? []) if (k.lastEventAgeSeconds !== null) lastEventAge.set({ kind: k.kind }, k.lastEventAgeSeconds);
    },
  });
  const sourceObjects = new client.Gauge({
    name: 'kubedns_source_objects',
    help: 'Objects the API source knows, by kind.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const k of readSource?.().kinds ?? []) sourceObjects.set({ kind: k.kind }, k.objects);
    },
  });
  const flushedRelists = new Map<string, number>();
  const relists = new client.Counter({
    name: 'kubedns_source_relists_total',
    help: 'Full lists after the first one (after a 410 Gone), by kind.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const k of readSource?.().kinds ?? []) {
        relists.inc({ kind: k.kind }, k.relists - (flushedRelists.get(k.kind) ?? 0));
        flushedRelists.set(k.kind, k.relists);
      }
    },
  });
  const flushedRestarts = new Map<string, number>();
  const restarts = new client.Counter({
    name: 'kubedns_source_watch_restarts_total',
    help: 'Watches started again, by kind and reason: expired (410), closed (ended by the server), silent (no byte for --silent-watch-timeout), error.',
    labelNames: ['kind', 'reason'],
    registers: [registry],
    collect() {
      for (const k of readSource?.().kinds ?? []) {
        for (const reason of RESTART_REASONS) {
          const key = `${k.kind}/${reason}`;
          restarts.inc({ kind: k.kind, reason }, k.restarts[reason] - (flushedRestarts.get(key) ?? 0));
          flushedRestarts.set(key, k.restarts[reason]);
        }
      }
    },
  });
  const programming = new FastHistogram({
    name: 'kubedns_dns_programming_duration_seconds',
    help: 'Time from a cluster change (an EndpointSlice last-change-trigger-time, else the watch event arriving) to the zone serving it.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });

  let readCache: (() => AnswerCache) | null = null;
  const cacheBytes = new client.Gauge({
    name: 'kubedns_answer_cache_bytes',
    help: 'Memory the pre-encoded answers are counted as taking, against kubedns_answer_cache_max_bytes (--cache-bytes).',
    registers: [registry],
    collect() {
      if (readCache) cacheBytes.set(readCache().bytes);
    },
  });
  const cacheMaxBytes = new client.Gauge({
    name: 'kubedns_answer_cache_max_bytes',
    help: 'The answer cache budget (--cache-bytes).',
    registers: [registry],
    collect() {
      if (readCache) cacheMaxBytes.set(readCache().maxBytes);
    },
  });
  const cacheEntries = new client.Gauge({
    name: 'kubedns_answer_cache_entries',
    help: 'Pre-encoded answers held.',
    registers: [registry],
    collect() {
      if (readCache) cacheEntries.set(readCache().size);
    },
  });
  let flushedEvictions = 0;
  const cacheEvictions = new client.Counter({
    name: 'kubedns_answer_cache_evictions_total',
    help: 'Pre-encoded answers pushed out to stay within --cache-bytes.',
    registers: [registry],
    collect() {
      if (readCache === null) return;
      const n = readCache().stats.evictions;
      cacheEvictions.inc(n - flushedEvictions);
      flushedEvictions = n;
    },
  });

  const addSystem = (system: System): void => {
    systems[SYSTEM_SLOT[system]]++;
  };
  const observer: ServerObserver = {
    response(qtype, rcode, transport, seconds, fromCache, tag) {
      const slot = TYPE_SLOT.get(qtype) ?? OTHER_SLOT;
      responses[(transport === 'tcp' ? slots * RCODES : 0) + slot * RCODES + (rcode < RCODES ? rcode : RCODES - 1)]++;
      duration.observe(seconds);
      if (fromCache) {
        cacheHits++;
        // The system the answer was counted under when it was made (the resolver's tag): a cached
        // CHAOS or REFUSED answer used to count as auth.
        systems[tag]++;
      }
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
    onSystem: addSystem,
    objectRejected: (kind) => rejected.inc({ kind }),
    setStateReader(read) {
      readState = read;
    },
    setSourceReader(read) {
      readSource = read;
    },
    programmed: (seconds) => programming.observe(seconds),
    setAnswerCacheReader(read) {
      readCache = read;
    },
  };
}
