// Counters and gauges set by the code that counts (the sidecar's probes, kube-dns's rejected
// objects): a series per set of label values, exported from its first count. For numbers kept
// elsewhere and read at a scrape, mirror.ts.

import type { Collector, Exposition, Labels, MetricType, Registry } from './registry.ts';

export interface MetricOptions {
  name: string;
  help: string;
  /** Every series' label names, in the order the exposition prints them. */
  labelNames?: readonly string[];
  registers?: readonly Registry[];
}

/** The series of one family, by their label values. */
abstract class Family implements Collector {
  readonly name: string;
  readonly help: string;
  abstract readonly type: MetricType;
  private readonly labelNames: readonly string[];
  private readonly series = new Map<string, { labels: Labels | null; value: number }>();

  constructor(o: MetricOptions) {
    this.name = o.name;
    this.help = o.help;
    this.labelNames = o.labelNames ?? [];
    // A family without labels is one series, exported from the start.
    if (this.labelNames.length === 0) this.series.set('', { labels: null, value: 0 });
    for (const r of o.registers ?? []) r.register(this);
  }

  protected entry(labels: Labels | undefined): { value: number } {
    const values = this.labelNames.map((n) => labels?.[n] ?? '');
    const key = values.join('\0');
    let e = this.series.get(key);
    if (e === undefined) {
      e = { labels: Object.fromEntries(this.labelNames.map((n, i) => [n, values[i]])), value: 0 };
      this.series.set(key, e);
    }
    return e;
  }

  collect(out: Exposition): void {
    for (const s of this.series.values()) out.sample(this.name, s.labels, s.value);
  }
}

export class Counter extends Family {
  readonly type = 'counter';

  /** Adds `n` (never negative) to the series of `labels`. */
  inc(n = 1, labels?: Labels): void {
    if (n > 0) this.entry(labels).value += n;
  }
}

export class Gauge extends Family {
  readonly type = 'gauge';

  set(value: number, labels?: Labels): void {
    this.entry(labels).value = value;
  }
}
