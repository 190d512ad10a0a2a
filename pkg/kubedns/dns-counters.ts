// What kube-dns counts per DNS reply, as plain numbers and typed arrays: bumped by a DnsServer's
// observer on the query path (no label hashing, no allocation), read by the metrics (metrics.ts,
// skydns-metrics.ts) when Prometheus scrapes. With --workers every thread has its own, and the
// owner adds theirs to its own at each scrape (copy, add): the metrics stay one set for the process.

import { Rcode, Type } from '../dns/constants.ts';
import type { ServerObserver } from '../dns/server.ts';
import { SIZE_BUCKETS } from '../metrics/coredns-sizes.ts';
import { HistogramCounts } from '../metrics/histogram.ts';
import { SYSTEMS } from './resolver.ts';

/** Query types with their own label value; everything else is "other" (bounded cardinality). */
export const TRACKED_TYPES = [Type.A, Type.AAAA, Type.SRV, Type.PTR, Type.CNAME, Type.TXT, Type.SOA, Type.NS, Type.MX, Type.ANY, Type.HINFO, Type.AXFR, Type.IXFR];
const TYPE_SLOT = new Map<number, number>(TRACKED_TYPES.map((t, i) => [t, i]));
export const OTHER_SLOT = TRACKED_TYPES.length;
export const TYPE_SLOTS = OTHER_SLOT + 1;
export const RCODES = 24;
export const PROTOS = ['udp', 'tcp'] as const;
export const DURATION_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const RECURSIVE = SYSTEMS.indexOf('recursive');

/** SkyDNS's error causes (`nodata` was declared and never counted; `overflow`, a reply over 64 KiB, cannot happen here). */
export const CAUSES = ['nxdomain', 'truncated', 'refused', 'overflow', 'servfail'] as const;
const CAUSE = Object.fromEntries(CAUSES.map((c, i) => [c, i])) as Record<(typeof CAUSES)[number], number>;
/** Go's prometheus.DefBuckets after SkyDNS's 0.001 and 0.003. */
export const SKYDNS_DURATION_BUCKETS = [0.001, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
export const SKYDNS_SIZE_BUCKETS = [0, 512, 1024, 1500, 2048, 4096, 8192, 12288, 16384, 20480, 24576, 28672, 32768, 36864, 40960, 45056, 49152, 53248, 57344, 61440, 65536];

type Counts = Record<string, number>;

function addCounts(into: Counts, from: Counts): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

function addArray(into: Float64Array, from: Float64Array): void {
  for (let i = 0; i < into.length; i++) into[i] += from[i];
}

export class DnsCounters {
  /** By transport, query type slot and rcode. */
  readonly responses = new Float64Array(PROTOS.length * TYPE_SLOTS * RCODES);
  cacheHits = 0;
  readonly duration = new HistogramCounts(DURATION_BUCKETS);
  /** SkyDNS's: by system (the resolver's tag). */
  readonly skydnsRequests = new Float64Array(SYSTEMS.length);
  readonly skydnsErrors = new Float64Array(SYSTEMS.length * CAUSES.length);
  skydnsCacheMisses = 0;
  /** Forwarded answers (the `recursive` system) from the cache: [success, denial (NXDOMAIN)] (CoreDNS's cache hits). */
  readonly forwardedCacheHits = new Float64Array(2);
  /** Cached forwarded answers asked upstream again ahead of their expiry (the Corefile cache's prefetch). */
  prefetches = 0;
  readonly skydnsDuration = new HistogramCounts(SKYDNS_DURATION_BUCKETS, SYSTEMS.length);
  readonly skydnsSize = new HistogramCounts(SKYDNS_SIZE_BUCKETS, SYSTEMS.length);
  /** CoreDNS's request and reply sizes, by transport (PROTOS). */
  readonly requestSize = new HistogramCounts(SIZE_BUCKETS, PROTOS.length);
  readonly responseSize = new HistogramCounts(SIZE_BUCKETS, PROTOS.length);
  readonly malformed: Counts = {};
  readonly dropped: Counts = {};
  truncated = 0;
  readonly tcpClosed: Counts = {};
  handlerErrors = 0;

  readonly observer: ServerObserver = {
    response: (qtype, rcode, transport, seconds, fromCache, tag, size, truncated, requestSize) => {
      const slot = TYPE_SLOT.get(qtype) ?? OTHER_SLOT;
      const proto = transport === 'tcp' ? 1 : 0;
      this.responses[proto * TYPE_SLOTS * RCODES + slot * RCODES + (rcode < RCODES ? rcode : RCODES - 1)]++;
      this.duration.observe(seconds);
      this.requestSize.observe(requestSize, proto);
      this.responseSize.observe(size, proto);
      if (fromCache) this.cacheHits++;
      // By the system the answer was made under (the resolver's tag), from the cache too: a cached
      // CHAOS or REFUSED answer used to count as auth.
      this.skydns(tag, rcode, seconds, size, truncated, fromCache);
    },
    malformed: (reason) => void (this.malformed[reason] = (this.malformed[reason] ?? 0) + 1),
    dropped: (reason) => void (this.dropped[reason] = (this.dropped[reason] ?? 0) + 1),
    truncated: () => void this.truncated++,
    tcpClosed: (reason) => void (this.tcpClosed[reason] = (this.tcpClosed[reason] ?? 0) + 1),
    handlerError: () => void this.handlerErrors++,
    prefetch: () => void this.prefetches++,
  };

  /** A copy, every count in it (what another thread sends, or the sum to add to). */
  copy(): DnsCounters {
    const c = new DnsCounters();
    c.add(this);
    return c;
  }

  /** `other`'s counts (another thread's, or a structured clone of them) added into these. */
  add(other: DnsCounters): void {
    addArray(this.responses, other.responses);
    this.cacheHits += other.cacheHits;
    this.duration.add(HistogramCounts.from(other.duration));
    addArray(this.skydnsRequests, other.skydnsRequests);
    addArray(this.skydnsErrors, other.skydnsErrors);
    this.skydnsCacheMisses += other.skydnsCacheMisses;
    addArray(this.forwardedCacheHits, other.forwardedCacheHits);
    this.prefetches += other.prefetches;
    this.skydnsDuration.add(HistogramCounts.from(other.skydnsDuration));
    this.skydnsSize.add(HistogramCounts.from(other.skydnsSize));
    this.requestSize.add(HistogramCounts.from(other.requestSize));
    this.responseSize.add(HistogramCounts.from(other.responseSize));
    addCounts(this.malformed, other.malformed);
    addCounts(this.dropped, other.dropped);
    this.truncated += other.truncated;
    addCounts(this.tcpClosed, other.tcpClosed);
    this.handlerErrors += other.handlerErrors;
  }

  /** What crosses to another thread: the counts only (the observer stays). */
  snapshot(): Omit<DnsCounters, 'observer'> {
    const { observer: _observer, ...counts } = this.copy();
    return counts as Omit<DnsCounters, 'observer'>;
  }

  private skydns(tag: number, rcode: number, seconds: number, bytes: number, truncated: boolean, fromCache: boolean): void {
    if (!(tag >= 0 && tag < SYSTEMS.length)) return; // an error reply the handler never saw
    this.skydnsRequests[tag]++;
    this.skydnsDuration.observe(seconds, tag);
    this.skydnsSize.observe(bytes, tag);
    // As SkyDNS: a truncated reply is counted as such whatever its rcode.
    const at = tag * CAUSES.length;
    if (truncated) this.skydnsErrors[at + CAUSE.truncated]++;
    else if (rcode === Rcode.SERVFAIL) this.skydnsErrors[at + CAUSE.servfail]++;
    else if (rcode === Rcode.REFUSED) this.skydnsErrors[at + CAUSE.refused]++;
    else if (rcode === Rcode.NXDOMAIN) this.skydnsErrors[at + CAUSE.nxdomain]++;
    if (!fromCache) this.skydnsCacheMisses++;
    else if (tag === RECURSIVE) this.forwardedCacheHits[rcode === Rcode.NXDOMAIN ? 1 : 0]++;
  }
}
