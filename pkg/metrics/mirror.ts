// Prometheus counters and gauges whose values are kept elsewhere (a typed array bumped on the DNS
// path, a part's plain stats object): read when Prometheus scrapes, so the counted path never
// touches the registry.

import type { Exposition, Labels, Registry } from './registry.ts';

export type { Labels } from './registry.ts';

export interface MirroredCounterOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/**
 * Registers a counter in `registry` whose series follow `totals()`: at each scrape, every series it
 * yields (labels, running total) grows by what its total grew since the last scrape. A series is
 * exported from the first scrape that yields it (at 0 if so); yield only the ones worth exporting.
 * A total that goes down (a part started again) adds nothing until it passes what was reported.
 */
export function mirroredCounter(registry: Registry, o: MirroredCounterOptions, totals: () => Iterable<readonly [Labels, number]>): void {
  const labelNames = o.labelNames ?? [];
  const reported = new Map<string, { labels: Labels; value: number }>();
  registry.register({
    name: o.name,
    help: o.help,
    type: 'counter',
    collect(out: Exposition) {
      for (const [labels, total] of totals()) {
        const values = labelNames.map((n) => labels[n]);
        const key = values.join('\0');
        const s = reported.get(key);
        if (s === undefined) reported.set(key, { labels: inOrder(labelNames, values), value: Math.max(0, total) });
        else s.value = Math.max(s.value, total);
      }
      for (const s of reported.values()) out.sample(o.name, s.labels, s.value);
    },
  });
}

/** Labels in labelNames' order whatever the caller's: the exposition prints them as given. */
function inOrder(labelNames: readonly string[], values: readonly string[]): Labels {
  return Object.fromEntries(labelNames.map((n, i) => [n, values[i]]));
}

/** A gauge whose series are read from elsewhere at each scrape: every series `values()` yields, set to its value. */
export function mirroredGauge(registry: Registry, o: MirroredCounterOptions, values: () => Iterable<readonly [Labels, number]>): void {
  const labelNames = o.labelNames ?? [];
  const last = new Map<string, { labels: Labels; value: number }>();
  registry.register({
    name: o.name,
    help: o.help,
    type: 'gauge',
    collect(out: Exposition) {
      for (const [labels, value] of values()) {
        const v = labelNames.map((n) => labels[n]);
        last.set(v.join('\0'), { labels: inOrder(labelNames, v), value });
      }
      for (const s of last.values()) out.sample(o.name, s.labels, s.value);
    },
  });
}
