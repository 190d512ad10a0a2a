// A Prometheus histogram for the DNS hot path: observe() is a bucket search over a typed array, with
// no label hashing and no allocation (prom-client's Histogram costs ~300 ns per observation, which at
// 70,000 queries a second is 2% of a core). Registered in a prom-client Registry as a custom metric.

import type { Registry } from 'prom-client';

interface MetricValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

export class FastHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: Float64Array;
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(opts: { name: string; help: string; buckets: number[]; registers: Registry[] }) {
    this.name = opts.name;
    this.help = opts.help;
    this.bounds = Float64Array.from(opts.buckets);
    this.counts = new Float64Array(opts.buckets.length + 1);
    for (const r of opts.registers) r.registerMetric(this as never);
  }

  observe(value: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }

  /** What prom-client's registry reads when it renders /metrics. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.counts.length; i++) {
      cumulative += this.counts[i];
      const le = i < this.bounds.length ? this.bounds[i] : '+Inf';
      values.push({ metricName: `${this.name}_bucket`, labels: { le }, value: cumulative });
    }
    values.push({ metricName: `${this.name}_sum`, labels: {}, value: this.sum });
    values.push({ metricName: `${this.name}_count`, labels: {}, value: this.count });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}
