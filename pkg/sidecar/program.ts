// The running sidecar: metrics, the HTTP endpoints, one loop per probe and the statistics poller.

import { formatUpstream } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { serveSidecarHttp } from './http.ts';
import { createSidecarMetrics } from './metrics.ts';
import type { SidecarMetrics } from './metrics.ts';
import { Probe } from './probe.ts';
import type { DnsServerAddress, ProbeSpec } from './probe-spec.ts';
import { StatsPoller } from './stats.ts';

export interface SidecarConfig {
  /** Where dnsmasq (or dnscache) answers the CHAOS statistics: --dnsmasq-addr, --dnsmasq-port. */
  dnsmasq: DnsServerAddress;
  /** --dnsmasq-poll-interval-ms. */
  pollIntervalMs: number;
  /** --prometheus-addr ('' = every address), --prometheus-port (0 = any free port). */
  httpHost: string;
  httpPort: number;
  /** --prometheus-path. */
  metricsPath: string;
  /** --prometheus-namespace. */
  namespace: string;
  probes: ProbeSpec[];
}

export interface RunningSidecar {
  httpPort: number;
  probes: Probe[];
  metrics: SidecarMetrics;
  close(): Promise<void>;
}

export async function runSidecar(config: SidecarConfig, log: Logger): Promise<RunningSidecar> {
  const metrics = createSidecarMetrics(config.namespace, config.probes.map((p) => p.label));
  const probes = config.probes.map((spec) => new Probe(spec, { log, onResult: (r) => metrics.probeResult(spec.label, r) }));
  const http = await serveSidecarHttp({
    host: config.httpHost,
    port: config.httpPort,
    metricsPath: config.metricsPath,
    registry: metrics.registry,
    health: new Map(probes.map((p) => [p.spec.label, () => p.health()])),
  });
  const poller = new StatsPoller({
    server: config.dnsmasq,
    intervalMs: config.pollIntervalMs,
    log: log.child('stats'),
    onStats: (stats, deltas) => metrics.stats(stats, deltas),
    onError: () => metrics.statsError(),
  });
  for (const p of probes) {
    log.info('probe', { label: p.spec.label, server: formatUpstream(p.spec.server), name: p.spec.name, type: p.spec.typeName, intervalMs: p.spec.intervalMs });
    p.start();
  }
  poller.start();
  return {
    httpPort: http.port,
    probes,
    metrics,
    close: async () => {
      await Promise.all([poller.stop(), ...probes.map((p) => p.stop())]);
      await http.close();
    },
  };
}
