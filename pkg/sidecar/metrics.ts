// The sidecar's Prometheus metrics, named as the original's so existing dashboards keep working
// (Go's BuildFQName: namespace, subsystem and name joined by '_', empty parts left out), plus a few of
// ours beside them. Default process metrics come with the registry (Node has no go_* ones).

import { Registry } from '../metrics/registry.ts';
import { registerProcessMetrics } from '../metrics/process.ts';
import { Counter, Gauge } from '../metrics/metric.ts';
import { FastHistogram } from '../metrics/histogram.ts';
import type { ProbeResult } from './probe.ts';
import type { CacheStats, StatDeltas } from './stats.ts';

/** The original's buckets: ExponentialBuckets(0.25, 2, 16), 0.25 ms to 8.192 s. */
export const LATENCY_BUCKETS_MS = Array.from({ length: 16 }, (_, i) => 0.25 * 2 ** i);

/** Go's prometheus.BuildFQName. */
export function fqName(namespace: string, subsystem: string, name: string): string {
  return [namespace, subsystem, name].filter((p) => p !== '').join('_');
}

export interface SidecarMetrics {
  registry: Registry;
  /** Records one probe's result under its label. */
  probeResult(label: string, result: ProbeResult): void;
  /** A statistics round that worked. */
  stats(stats: CacheStats, deltas: StatDeltas): void;
  /** A statistics round that failed. */
  statsError(): void;
}

interface ProbeSeries {
  latency: FastHistogram;
  errors: Counter;
  up: Gauge;
  rcode: Gauge;
}

export function createSidecarMetrics(namespace: string, probeLabels: readonly string[]): SidecarMetrics {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const registers = [registry];
  const dnsmasq = (name: string) => fqName(namespace, 'dnsmasq', name);
  const counter = (name: string, help: string) => new Counter({ name, help, registers });

  // The original's dnsmasq counters (pkg/sidecar/metrics.go), help texts included.
  const counters: Record<keyof CacheStats, Counter> = {
    hits: counter(dnsmasq('hits'), 'Number of DNS cache hits (from start of process)'),
    misses: counter(dnsmasq('misses'), 'Number of DNS cache misses (from start of process)'),
    evictions: counter(dnsmasq('evictions'), 'Counter of DNS cache evictions (from start of process)'),
    insertions: counter(dnsmasq('insertions'), 'Counter of DNS cache insertions (from start of process)'),
    cachesize: counter(dnsmasq('max_size'), 'Maximum size of the DNS cache'),
  };
  const errors = counter(dnsmasq('errors'), 'Number of errors that have occurred getting metrics');
  // Ours.
  const polls = counter(dnsmasq('polls_total'), 'Statistics rounds read from the forwarder (all five *.bind answers)');
  const restarts = counter(dnsmasq('restarts_total'), 'Times the forwarder\'s statistics went down (it restarted); its counts then add from 0');
  const cacheSize = new Gauge({ name: dnsmasq('cache_size'), help: 'The forwarder\'s cache size (cachesize.bind) at the last round', registers });

  const probes = new Map<string, ProbeSeries>();
  for (const label of probeLabels) {
    const probe = (name: string) => fqName(namespace, 'probe', `${label}_${name}`);
    const rcode = new Gauge({ name: probe('last_rcode'), help: `The rcode of the last reply to probe ${label}; -1: no reply (timeout, network error) or no probe yet`, registers });
    rcode.set(-1);
    probes.set(label, {
      // The original's two per probe.
      latency: new FastHistogram({ name: probe('latency_ms'), help: `Latency of the DNS probe request ${label}`, buckets: LATENCY_BUCKETS_MS, registers }),
      errors: counter(probe('errors'), `Count of errors in name resolution of ${label}`),
      // Ours.
      up: new Gauge({ name: probe('up'), help: `1 when the last probe ${label} passed (what /healthcheck/${label} reports), else 0`, registers }),
      rcode,
    });
  }

  return {
    registry,
    probeResult(label, r) {
      const s = probes.get(label);
      if (s === undefined) return;
      if (r.ok) s.latency.observe(r.latencyMs);
      else s.errors.inc();
      s.up.set(r.ok ? 1 : 0);
      s.rcode.set(r.rcode);
    },
    stats(stats, deltas) {
      for (const name of Object.keys(counters) as Array<keyof CacheStats>) counters[name].inc(deltas.add[name]);
      if (deltas.restarted) restarts.inc();
      polls.inc();
      cacheSize.set(stats.cachesize);
    },
    statsError() {
      errors.inc();
    },
  };
}
