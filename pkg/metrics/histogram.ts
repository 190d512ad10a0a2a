// A Prometheus histogram for the DNS hot path: observe() is a bucket search over a typed array, with
// no label hashing and no allocation (prom-client's Histogram costs ~300 ns per observation, which at
// 70,000 queries a second is 2% of a core). Registered in a prom-client Registry as a custom metric.

import type { Registry } from 'prom-client';

interface MetricValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** One label and every value it takes: a series per value, chosen by its index when observing. */
export interface HistogramLabel {
  name: string;
  values: readonly string[];
}

export class FastHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: Float64Array;
  private readonly label: HistogramLabel | null;
  /** (bounds + 1) slots per series, series after series. */
  private readonly counts: Float64Array;
  private readonly sums: Float64Array;
  private readonly totals: Float64Array;

  constructor(opts: { name: string; help: string; buckets: readonly number[]; registers: Registry[]; label?: HistogramLabel }) {
    this.name = opts.name;
    this.help = opts.help;
    this.bounds = Float64Array.from(opts.buckets);
    this.label = opts.label ?? null;
    const series = this.label?.values.length ?? 1;
    this.counts = new Float64Array((opts.buckets.length + 1) * series);
    this.sums = new Float64Array(series);
    this.totals = new Float64Array(series);
    for (const r of opts.registers) r.registerMetric(this as never);
  }

  /** One observation, in the series of label value number `series` (0 without a label). */
  observe(value: number, series = 0): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]) i++;
    this.counts[series * (b.length + 1) + i]++;
    this.sums[series] += value;
    this.totals[series]++;
  }

  /** What prom-client's registry reads when it renders /metrics: a labelled series once observed. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    const slots = this.bounds.length + 1;
    for (let s = 0; s < this.totals.length; s++) {
      if (this.label !== null && this.totals[s] === 0) continue;
      const labels: Record<string, string> = this.label === null ? {} : { [this.label.name]: this.label.values[s] };
      let cumulative = 0;
      for (let i = 0; i < slots; i++) {
        cumulative += this.counts[s * slots + i];
        const le = i < this.bounds.length ? this.bounds[i] : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: this.sums[s] });
      values.push({ metricName: `${this.name}_count`, labels, value: this.totals[s] });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.counts.fill(0);
    this.sums.fill(0);
    this.totals.fill(0);
  }
}
