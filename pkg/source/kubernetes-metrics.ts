// The API source's metrics (kubedns_source_*, and the programming latency), read from status() when
// Prometheus scrapes; registered by the program that runs the source.

import type { Registry } from '../metrics/registry.ts';
import { FastHistogram, collectedHistogram } from '../metrics/histogram.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import type { KubernetesSource } from './kubernetes.ts';
import type { KubeObject } from './source.ts';
import { RESTART_REASONS } from './kubernetes-reflector.ts';

/** A Service's kind as CoreDNS's programming latency labels it, for an EndpointSlice of it; null: not known. */
export type ServiceKindOf = (slice: KubeObject) => 'cluster_ip' | 'headless_with_selector' | null;

/**
 * `coreDns`: CoreDNS's names for the same (a Corefile's kubernetes plugin): the programming latency
 * by service kind, and the API requests.
 */
export function registerKubernetesSourceMetrics(registry: Registry, source: KubernetesSource, coreDns?: { serviceKind: ServiceKindOf }): void {
  const kinds = () => source.status().kinds;
  mirroredGauge(registry, { name: 'kubedns_source_synced', help: '1 once the API source has listed every kind once.' }, () => [[{}, source.status().synced ? 1 : 0]]);
  mirroredGauge(registry, { name: 'kubedns_source_last_event_age_seconds', help: 'Seconds since the last list, watch event or bookmark, by kind.', labelNames: ['kind'] }, () =>
    kinds().flatMap((k) => (k.lastEventAgeSeconds === null ? [] : [[{ kind: k.kind }, k.lastEventAgeSeconds] as const])),
  );
  mirroredGauge(registry, { name: 'kubedns_source_objects', help: 'Objects the API source knows, by kind.', labelNames: ['kind'] }, () => kinds().map((k) => [{ kind: k.kind }, k.objects] as const));
  mirroredCounter(registry, { name: 'kubedns_source_relists_total', help: 'Full lists after the first one (after a 410 Gone), by kind.', labelNames: ['kind'] }, () =>
    kinds().map((k) => [{ kind: k.kind }, k.relists] as const),
  );
  mirroredCounter(
    registry,
    {
      name: 'kubedns_source_watch_restarts_total',
      help: 'Watches started again, by kind and reason: expired (410), closed (ended by the server), silent (no byte for --silent-watch-timeout), error.',
      labelNames: ['kind', 'reason'],
    },
    () => kinds().flatMap((k) => RESTART_REASONS.map((reason) => [{ kind: k.kind, reason }, k.restarts[reason]] as const)),
  );
  const programming = new FastHistogram({
    name: 'kubedns_dns_programming_duration_seconds',
    help: 'Time from a cluster change (an EndpointSlice last-change-trigger-time, else the watch event arriving) to the zone serving it.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const core = coreDns === undefined ? null : coreDnsKubernetesMetrics(registry, source);
  source.onProgrammed = (seconds, triggered) => {
    programming.observe(seconds);
    // As CoreDNS: only a change that says when it happened, of a Service known.
    const kind = core === null || triggered === null ? null : coreDns!.serviceKind(triggered);
    if (kind !== null) core!.observe(seconds, SERVICE_KINDS.indexOf(kind));
  };
}

/** CoreDNS's service_kind values (headless_without_selector is never observed, in CoreDNS either). */
const SERVICE_KINDS = ['cluster_ip', 'headless_with_selector'] as const;

/** coredns_kubernetes_*: the API requests (read at scrape time) and the programming latency (returned, to observe). */
function coreDnsKubernetesMetrics(registry: Registry, source: KubernetesSource): FastHistogram {
  const r = source.requests;
  mirroredCounter(registry, { name: 'coredns_kubernetes_rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'method', 'host'] }, () =>
    [...r.results].map(([key, n]) => {
      const [code, method] = key.split(' ');
      return [{ code, method, host: r.host }, n] as const;
    }),
  );
  collectedHistogram(registry, { name: 'coredns_kubernetes_rest_client_request_duration_seconds', help: 'Request latency in seconds. Broken down by verb and host.' }, () => [[{ verb: 'GET', host: r.host }, r.latency, 0]]);
  return new FastHistogram({
    name: 'coredns_kubernetes_dns_programming_duration_seconds',
    help: 'Histogram of the time (in seconds) it took to program a dns instance.',
    // CoreDNS's: 1 ms doubling to ~17 minutes.
    buckets: Array.from({ length: 20 }, (_, i) => 0.001 * 2 ** i),
    registers: [registry],
    label: { name: 'service_kind', values: SERVICE_KINDS },
  });
}
