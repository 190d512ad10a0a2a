// A Prometheus counter whose values are running totals kept elsewhere (a typed array bumped on the
// DNS path, a part's plain stats object): read when Prometheus scrapes and added as deltas, so the
// counted path never touches prom-client.

import client from 'prom-client';

export type Labels = Record<string, string>;

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
export function mirroredCounter(registry: client.Registry, o: MirroredCounterOptions, totals: () => Iterable<readonly [Labels, number]>): client.Counter<string> {
  const reported = new Map<string, number>();
  const labelNames = o.labelNames ?? [];
  const counter: client.Counter<string> = new client.Counter({
    name: o.name,
    help: o.help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, total] of totals()) {
        const values = labelNames.map((n) => labels[n]);
        const key = values.join('\0');
        const before = reported.get(key) ?? 0;
        counter.inc(inOrder(labelNames, values), Math.max(0, total - before));
        reported.set(key, Math.max(before, total));
      }
    },
  });
  return counter;
}

/** Labels in labelNames' order whatever the caller's: the exposition prints them as given. */
function inOrder(labelNames: readonly string[], values: readonly string[]): Labels {
  return Object.fromEntries(labelNames.map((n, i) => [n, values[i]]));
}

/** A gauge whose series are read from elsewhere at each scrape: every series `values()` yields is set. */
export function mirroredGauge(registry: client.Registry, o: MirroredCounterOptions, values: () => Iterable<readonly [Labels, number]>): client.Gauge<string> {
  const labelNames = o.labelNames ?? [];
  const gauge: client.Gauge<string> = new client.Gauge({
    name: o.name,
    help: o.help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, value] of values()) gauge.set(inOrder(labelNames, labelNames.map((n) => labels[n])), value);
    },
  });
  return gauge;
}
