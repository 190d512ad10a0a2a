// The nanny's Prometheus metrics. Its parts keep plain counters (the watcher's, the supervisor's, the
// resolver's); they are read when Prometheus scrapes, and fed to prom-client as deltas.

import client from 'prom-client';

export interface NannyCounts {
  configUpdates: number;
  configInvalid: number;
  reloads: number;
  configRestarts: number;
  exitRestarts: number;
  stubFailures: number;
  childUp: boolean;
}

type Labels = Record<string, string>;

/** A counter whose series follow running totals kept elsewhere. */
function mirroredCounter(registry: client.Registry, name: string, help: string, series: Array<[Labels, (c: NannyCounts) => number]>, read: () => NannyCounts): void {
  const reported = series.map(() => 0);
  const labelNames = Object.keys(series[0][0]);
  const counter: client.Counter<string> = new client.Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      const counts = read();
      series.forEach(([labels, pick], i) => {
        const total = pick(counts);
        // inc(0) as well: every series is exported from the start, at 0.
        counter.inc(labels, Math.max(0, total - reported[i]));
        reported[i] = Math.max(reported[i], total);
      });
    },
  });
}

export function createNannyMetrics(read: () => NannyCounts): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const one = (name: string, help: string, pick: (c: NannyCounts) => number) => mirroredCounter(registry, name, help, [[{}, pick]], read);
  one('dnsmasq_nanny_config_updates_total', 'Configuration versions accepted from -configDir.', (c) => c.configUpdates);
  one('dnsmasq_nanny_config_invalid_total', 'Configuration versions rejected as invalid (the last good one stays).', (c) => c.configInvalid);
  one('dnsmasq_nanny_child_reloads_total', 'SIGHUPs sent to the child after its servers-file changed.', (c) => c.reloads);
  mirroredCounter(
    registry,
    'dnsmasq_nanny_child_restarts_total',
    'Children started again: for a new command line (config) or after an unexpected exit (exit).',
    [
      [{ reason: 'config' }, (c) => c.configRestarts],
      [{ reason: 'exit' }, (c) => c.exitRestarts],
    ],
    read,
  );
  one('dnsmasq_nanny_stub_resolution_failures_total', 'Stub domain server names that did not resolve (each try).', (c) => c.stubFailures);
  const up: client.Gauge<string> = new client.Gauge({
    name: 'dnsmasq_nanny_child_up',
    help: '1 while the child process is running.',
    registers: [registry],
    collect() {
      up.set(read().childUp ? 1 : 0);
    },
  });
  return registry;
}
