// The nanny's Prometheus metrics. Its parts keep plain counters (the watcher's, the supervisor's, the
// resolver's); they are read when Prometheus scrapes.

import { Registry } from '../metrics/registry.ts';
import { registerProcessMetrics } from '../metrics/process.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';

export interface NannyCounts {
  configUpdates: number;
  configInvalid: number;
  reloads: number;
  configRestarts: number;
  exitRestarts: number;
  stubFailures: number;
  childUp: boolean;
}

export function createNannyMetrics(read: () => NannyCounts): Registry {
  const registry = new Registry();
  registerProcessMetrics(registry);
  // Every series from the start, at 0.
  const one = (name: string, help: string, pick: (c: NannyCounts) => number) => mirroredCounter(registry, { name, help }, () => [[{}, pick(read())]]);
  one('dnsmasq_nanny_config_updates_total', 'Configuration versions accepted from -configDir.', (c) => c.configUpdates);
  one('dnsmasq_nanny_config_invalid_total', 'Configuration versions rejected as invalid (the last good one stays).', (c) => c.configInvalid);
  one('dnsmasq_nanny_child_reloads_total', 'SIGHUPs sent to the child after its servers-file changed.', (c) => c.reloads);
  mirroredCounter(
    registry,
    { name: 'dnsmasq_nanny_child_restarts_total', help: 'Children started again: for a new command line (config) or after an unexpected exit (exit).', labelNames: ['reason'] },
    () => {
      const c = read();
      return [
        [{ reason: 'config' }, c.configRestarts],
        [{ reason: 'exit' }, c.exitRestarts],
      ];
    },
  );
  one('dnsmasq_nanny_stub_resolution_failures_total', 'Stub domain server names that did not resolve (each try).', (c) => c.stubFailures);
  mirroredGauge(registry, { name: 'dnsmasq_nanny_child_up', help: '1 while the child process is running.' }, () => [[{}, read().childUp ? 1 : 0]]);
  return registry;
}
