// The API source's metrics (kubedns_source_*, and the programming latency), read from status() when
// Prometheus scrapes; registered by the program that runs the source.

import type client from 'prom-client';
import { FastHistogram } from '../metrics/histogram.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import type { KubernetesSource } from './kubernetes.ts';
import { RESTART_REASONS } from './kubernetes-reflector.ts';

export function registerKubernetesSourceMetrics(registry: client.Registry, source: KubernetesSource): void {
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
  source.onProgrammed = (seconds) => programming.observe(seconds);
}
