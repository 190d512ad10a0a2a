// CoreDNS's per-request metrics, as its prometheus and cache plugins export them, so upstream's
// NodeLocal DNSCache dashboards and alerts work on node-cache: requests, responses by rcode, request
// duration and response size per server and zone, and the cache's requests, hits by type, misses and
// stale answers. Counted from each listener's DnsServer observer by the answer's tag (the zone's
// first tag plus the CachingHandler's AnswerKind, kept with a cached answer too): plain typed arrays
// on the query path, labels only when Prometheus scrapes. A series outlives the engine that counted
// into it: a reload's new engine counts on in the same ones.

const { isIPv6 } = process.getBuiltinModule('node:net');
import type { Registry } from '../metrics/registry.ts';
import { rcodeName } from '../dns/constants.ts';
import { timedSlot } from '../dns/answer-cache.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import type { ServerObserver } from '../dns/server.ts';
import { AnsweringMetrics } from '../corefile/answering-metrics.ts';
import { ANSWER_KINDS, AnswerKind } from '../dnscache/handler.ts';
import { REQUEST_SIZE_HELP, RESPONSE_SIZE_HELP, SIZE_BUCKETS } from '../metrics/coredns-sizes.ts';
import { HistogramCounts, collectedHistogram } from '../metrics/histogram.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import type { Labels } from '../metrics/mirror.ts';

/** The query types CoreDNS's metrics name (plugin/metrics/vars monitorType); every other is "other". */
const TYPES: readonly (readonly [string, number])[] = [
  ['A', 1], ['AAAA', 28], ['MX', 15], ['SOA', 6], ['CNAME', 5], ['PTR', 12], ['TXT', 16], ['NS', 2], ['SRV', 33],
  ['DS', 43], ['DNSKEY', 48], ['RRSIG', 46], ['NSEC', 47], ['NSEC3', 50], ['HTTPS', 65], ['IXFR', 251], ['AXFR', 252], ['ANY', 255],
];
const TYPE_SLOT = new Map<number, number>(TYPES.map(([, type], i) => [type, i]));
const OTHER = TYPES.length;
const TYPE_NAMES = [...TYPES.map(([name]) => name), 'other'];
const PROTOS = ['udp', 'tcp'] as const;
const RCODES = 24;
/** The plugin that wrote a reply: the cache (a hit, or a stale answer), else forward. */
const PLUGINS = ['cache', 'forward'] as const;
/** CoreDNS's plugin.TimeBuckets: 0.25 ms doubling 16 times. */
const DURATION_BUCKETS = Array.from({ length: 16 }, (_, i) => 0.00025 * 2 ** i);

/** One server (listener) and zone: what CoreDNS labels server, zone (zones for the cache). */
class ZoneSeries {
  readonly requests = new Float64Array(PROTOS.length * TYPE_NAMES.length);
  readonly responses = new Float64Array(RCODES * PLUGINS.length);
  /** Cache hits: success, denial. */
  readonly hits = new Float64Array(2);
  stale = 0;
  /** Cached answers asked upstream again ahead of their expiry. */
  prefetched = 0;
  readonly duration = new HistogramCounts(DURATION_BUCKETS, TYPE_NAMES.length);
  readonly size = new HistogramCounts(SIZE_BUCKETS, PROTOS.length);
  readonly requestSize = new HistogramCounts(SIZE_BUCKETS, PROTOS.length);
  /** The zone's block has a cache (the last engine's plan says). */
  cached = false;
  /** The last engine's answer cache (AnswerCache.timed counts its entries) and the zone's first tag in it. */
  timed: { counts: AnswerCache['timed']; tagBase: number } | null = null;

  readonly server: string;
  readonly zone: string;
  readonly family: string;

  constructor(server: string, zone: string, family: string) {
    this.server = server;
    this.zone = zone;
    this.family = family;
  }

  count(qtype: number, rcode: number, proto: number, seconds: number, fromCache: boolean, kind: number, size: number, requestSize: number): void {
    const type = TYPE_SLOT.get(qtype) ?? OTHER;
    this.requests[proto * TYPE_NAMES.length + type]++;
    const kept = kind === AnswerKind.keptSuccess || kind === AnswerKind.keptDenial;
    const byCache = fromCache || kept || kind === AnswerKind.stale;
    this.responses[(rcode < RCODES ? rcode : RCODES - 1) * PLUGINS.length + (byCache ? 0 : 1)]++;
    this.duration.observe(seconds, type);
    this.size.observe(size, proto);
    this.requestSize.observe(requestSize, proto);
    if (fromCache || kept) this.hits[kind === AnswerKind.denial || kind === AnswerKind.keptDenial ? 1 : 0]++;
    if (kind === AnswerKind.stale) this.stale++;
  }

  /** The zone's entries (or evictions) in the cache, of one type: its tags' slots summed. */
  timedCount(pick: (t: AnswerCache['timed']) => number[], denial: boolean): number {
    if (this.timed === null) return 0;
    const counts = pick(this.timed.counts);
    let n = 0;
    for (let kind = 0; kind < ANSWER_KINDS; kind++) n += counts[timedSlot(this.timed.tagBase + kind, denial)] ?? 0;
    return n;
  }

  get total(): number {
    let n = 0;
    for (const v of this.requests) n += v;
    return n;
  }
}

/** CoreDNS's `zone` value: the zone with its trailing dot, the root as ".". */
const fqdn = (zone: string): string => (zone === '' ? '.' : `${zone}.`);

export class RequestMetrics {
  /** hosts' and template's metrics, which every engine's plugins report into. */
  readonly answering = new AnsweringMetrics();
  private readonly series = new Map<string, ZoneSeries>();

  constructor(registry: Registry) {
    this.register(registry);
    this.answering.register(registry);
  }

  /**
   * The observer of the listener on address:port, whose answers are tagged zone index ×
   * ANSWER_KINDS + kind, the zone index counting in `zones` (the engine's).
   */
  observer(address: string, port: number, zones: readonly { zone: string; cached: boolean }[], cache?: AnswerCache): ServerObserver {
    const server = `dns://${address}:${port}`;
    const family = isIPv6(address) ? '2' : '1';
    const byTag = zones.map((z, i) => {
      const key = `${server}\0${z.zone}`;
      const s = this.series.get(key) ?? new ZoneSeries(server, fqdn(z.zone), family);
      s.cached = z.cached;
      s.timed = cache === undefined ? null : { counts: cache.timed, tagBase: i * ANSWER_KINDS };
      this.series.set(key, s);
      return s;
    });
    return {
      response(qtype, rcode, transport, seconds, fromCache, tag, size, _truncated, requestSize) {
        // A reply the server made without the handler (a malformed query's FORMERR) has no zone.
        if (tag < 0) return;
        byTag[Math.floor(tag / ANSWER_KINDS)]?.count(qtype, rcode, transport === 'tcp' ? 1 : 0, seconds, fromCache, tag % ANSWER_KINDS, size, requestSize);
      },
      prefetch(tag) {
        const s = byTag[Math.floor(tag / ANSWER_KINDS)];
        if (s !== undefined) s.prefetched++;
      },
    };
  }

  private register(registry: Registry): void {
    const all = () => this.series.values();
    const dns = (s: ZoneSeries): Labels => ({ server: s.server, zone: s.zone, view: '' });
    const cache = (s: ZoneSeries): Labels => ({ server: s.server, zones: s.zone, view: '' });
    const cached = () => [...all()].filter((s) => s.cached);
    mirroredCounter(registry, { name: 'coredns_dns_requests_total', help: 'Counter of DNS requests made per zone, protocol and family.', labelNames: ['server', 'zone', 'view', 'proto', 'family', 'type'] }, function* () {
      for (const s of all()) {
        for (let i = 0; i < s.requests.length; i++) {
          if (s.requests[i] === 0) continue;
          const proto = PROTOS[Math.floor(i / TYPE_NAMES.length)];
          yield [{ ...dns(s), proto, family: s.family, type: TYPE_NAMES[i % TYPE_NAMES.length] }, s.requests[i]] as const;
        }
      }
    });
    mirroredCounter(registry, { name: 'coredns_dns_responses_total', help: 'Counter of response status codes.', labelNames: ['server', 'zone', 'view', 'rcode', 'plugin'] }, function* () {
      for (const s of all()) {
        for (let i = 0; i < s.responses.length; i++) {
          if (s.responses[i] > 0) yield [{ ...dns(s), rcode: rcodeName(Math.floor(i / PLUGINS.length)), plugin: PLUGINS[i % PLUGINS.length] }, s.responses[i]] as const;
        }
      }
    });
    collectedHistogram(registry, { name: 'coredns_dns_request_duration_seconds', help: 'Histogram of the time (in seconds) each request took per zone.' }, function* () {
      for (const s of all()) for (let t = 0; t < TYPE_NAMES.length; t++) yield [{ ...dns(s), type: TYPE_NAMES[t] }, s.duration, t] as const;
    });
    const sizes = (name: string, help: string, pick: (s: ZoneSeries) => HistogramCounts) =>
      collectedHistogram(registry, { name, help }, function* () {
        for (const s of all()) for (let p = 0; p < PROTOS.length; p++) yield [{ ...dns(s), proto: PROTOS[p] }, pick(s), p] as const;
      });
    sizes('coredns_dns_request_size_bytes', REQUEST_SIZE_HELP, (s) => s.requestSize);
    sizes('coredns_dns_response_size_bytes', RESPONSE_SIZE_HELP, (s) => s.size);
    const cacheCounter = (name: string, help: string, value: (s: ZoneSeries) => number) =>
      mirroredCounter(registry, { name, help, labelNames: ['server', 'zones', 'view'] }, () => cached().map((s) => [cache(s), value(s)] as const));
    cacheCounter('coredns_cache_requests_total', 'The count of cache requests.', (s) => s.total);
    cacheCounter('coredns_cache_misses_total', 'The count of cache misses. Deprecated, derive misses from cache hits/requests counters.', (s) => s.total - s.hits[0] - s.hits[1]);
    cacheCounter('coredns_cache_served_stale_total', 'The number of requests served from stale cache entries.', (s) => s.stale);
    cacheCounter('coredns_cache_prefetch_total', 'The number of times the cache has prefetched a cached item.', (s) => s.prefetched);
    const timed = (pick: (t: AnswerCache['timed']) => number[]) => cached().flatMap((s) => (['success', 'denial'] as const).map((type) => [{ ...cache(s), type }, s.timedCount(pick, type === 'denial')] as const));
    mirroredGauge(registry, { name: 'coredns_cache_entries', help: 'The number of elements in the cache.', labelNames: ['server', 'type', 'zones', 'view'] }, () => timed((t) => t.entries));
    mirroredCounter(registry, { name: 'coredns_cache_evictions_total', help: 'The count of cache evictions.', labelNames: ['server', 'type', 'zones', 'view'] }, () => timed((t) => t.evictions));
    mirroredCounter(registry, { name: 'coredns_cache_hits_total', help: 'The count of cache hits.', labelNames: ['server', 'type', 'zones', 'view'] }, () =>
      cached().flatMap((s) => [[{ ...cache(s), type: 'success' }, s.hits[0]] as const, [{ ...cache(s), type: 'denial' }, s.hits[1]] as const]),
    );
  }
}
