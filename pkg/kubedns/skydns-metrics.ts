// The original kube-dns's SkyDNS metrics, same names, types, labels and buckets, so dashboards and
// alerts written for it keep working: request count, duration and response size by system, errors by
// system and cause, response-cache misses. Read from DnsCounters (by the answer's tag, the Resolver's
// system, from the cache too) when Prometheus scrapes.

import type { Registry } from '../metrics/registry.ts';
import { collectedHistogram } from '../metrics/histogram.ts';
import { mirroredCounter } from '../metrics/mirror.ts';
import type { Labels } from '../metrics/mirror.ts';
import { CAUSES } from './dns-counters.ts';
import type { DnsCounters } from './dns-counters.ts';
import { SYSTEMS } from './resolver.ts';

export function registerSkyDnsMetrics(registry: Registry, read: () => DnsCounters): void {
  const bySystem = (pick: (c: DnsCounters) => DnsCounters['skydnsDuration']) =>
    function* (): Iterable<readonly [Labels, DnsCounters['skydnsDuration'], number]> {
      const counts = pick(read());
      for (let s = 0; s < SYSTEMS.length; s++) yield [{ system: SYSTEMS[s] }, counts, s];
    };
  collectedHistogram(registry, { name: 'skydns_skydns_dns_request_duration_seconds', help: 'Histogram of the time (in seconds) each request took to resolve.' }, bySystem((c) => c.skydnsDuration));
  collectedHistogram(registry, { name: 'skydns_skydns_dns_response_size_bytes', help: 'Size of the returns response in bytes.' }, bySystem((c) => c.skydnsSize));
  mirroredCounter(registry, { name: 'skydns_skydns_dns_request_count_total', help: 'Counter of DNS requests made.', labelNames: ['system'] }, () => {
    const requests = read().skydnsRequests;
    return SYSTEMS.flatMap((system, i): (readonly [Labels, number])[] => (requests[i] > 0 ? [[{ system }, requests[i]]] : []));
  });
  mirroredCounter(registry, { name: 'skydns_skydns_dns_error_count_total', help: 'Counter of DNS requests resulting in an error.', labelNames: ['system', 'cause'] }, () => {
    const errors = read().skydnsErrors;
    return SYSTEMS.flatMap((system, i) => CAUSES.flatMap((cause, j): (readonly [Labels, number])[] => (errors[i * CAUSES.length + j] > 0 ? [[{ system, cause }, errors[i * CAUSES.length + j]]] : [])));
  });
  mirroredCounter(registry, { name: 'skydns_skydns_dns_cachemiss_count_total', help: 'Counter of DNS requests that result in a cache miss.', labelNames: ['cache'] }, () => [[{ cache: 'response' }, read().skydnsCacheMisses]]);
}
