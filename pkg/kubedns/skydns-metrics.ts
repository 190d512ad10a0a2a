// The original kube-dns's SkyDNS metrics, same names, types, labels and buckets, so dashboards and
// alerts written for it keep working: request count, duration and response size by system, errors by
// system and cause, response-cache misses. Fed from the DNS server's observer by the answer's tag (the
// Resolver's system), from the cache too; typed arrays on the query path, prom-client at scrape time.

import type client from 'prom-client';
import { Rcode } from '../dns/constants.ts';
import { FastHistogram } from '../metrics/histogram.ts';
import { mirroredCounter } from '../metrics/mirror.ts';
import type { Labels } from '../metrics/mirror.ts';
import { SYSTEMS } from './resolver.ts';

/** SkyDNS's error causes (`nodata` was declared and never counted; `overflow`, a reply over 64 KiB, cannot happen here). */
const CAUSES = ['nxdomain', 'truncated', 'refused', 'overflow', 'servfail'] as const;
const CAUSE = Object.fromEntries(CAUSES.map((c, i) => [c, i])) as Record<(typeof CAUSES)[number], number>;
/** Go's prometheus.DefBuckets after SkyDNS's 0.001 and 0.003. */
const DURATION_BUCKETS = [0.001, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SIZE_BUCKETS = [0, 512, 1024, 1500, 2048, 4096, 8192, 12288, 16384, 20480, 24576, 28672, 32768, 36864, 40960, 45056, 49152, 53248, 57344, 61440, 65536];

export interface SkyDnsMetrics {
  /** One reply of an answer tagged with system number `tag` (SYSTEMS). */
  response(tag: number, rcode: number, seconds: number, size: number, truncated: boolean, fromCache: boolean): void;
}

export function createSkyDnsMetrics(registry: client.Registry): SkyDnsMetrics {
  const requests = new Float64Array(SYSTEMS.length);
  const errors = new Float64Array(SYSTEMS.length * CAUSES.length);
  let cacheMisses = 0;
  const label = { name: 'system', values: SYSTEMS };
  const duration = new FastHistogram({ name: 'skydns_skydns_dns_request_duration_seconds', help: 'Histogram of the time (in seconds) each request took to resolve.', buckets: DURATION_BUCKETS, label, registers: [registry] });
  const size = new FastHistogram({ name: 'skydns_skydns_dns_response_size_bytes', help: 'Size of the returns response in bytes.', buckets: SIZE_BUCKETS, label, registers: [registry] });
  mirroredCounter(registry, { name: 'skydns_skydns_dns_request_count_total', help: 'Counter of DNS requests made.', labelNames: ['system'] }, () =>
    SYSTEMS.flatMap((system, i): (readonly [Labels, number])[] => (requests[i] > 0 ? [[{ system }, requests[i]]] : [])),
  );
  mirroredCounter(registry, { name: 'skydns_skydns_dns_error_count_total', help: 'Counter of DNS requests resulting in an error.', labelNames: ['system', 'cause'] }, () =>
    SYSTEMS.flatMap((system, i) => CAUSES.flatMap((cause, j): (readonly [Labels, number])[] => (errors[i * CAUSES.length + j] > 0 ? [[{ system, cause }, errors[i * CAUSES.length + j]]] : []))),
  );
  mirroredCounter(registry, { name: 'skydns_skydns_dns_cachemiss_count_total', help: 'Counter of DNS requests that result in a cache miss.', labelNames: ['cache'] }, () => [[{ cache: 'response' }, cacheMisses]]);

  const countError = (system: number, rcode: number, truncated: boolean): void => {
    // As SkyDNS: a truncated reply is counted as such whatever its rcode.
    if (truncated) errors[system * CAUSES.length + CAUSE.truncated]++;
    else if (rcode === Rcode.SERVFAIL) errors[system * CAUSES.length + CAUSE.servfail]++;
    else if (rcode === Rcode.REFUSED) errors[system * CAUSES.length + CAUSE.refused]++;
    else if (rcode === Rcode.NXDOMAIN) errors[system * CAUSES.length + CAUSE.nxdomain]++;
  };
  return {
    response(tag, rcode, seconds, bytes, truncated, fromCache) {
      if (!(tag >= 0 && tag < SYSTEMS.length)) return; // an error reply the handler never saw
      requests[tag]++;
      duration.observe(seconds, tag);
      size.observe(bytes, tag);
      countError(tag, rcode, truncated);
      if (!fromCache) cacheMisses++;
    },
  };
}
