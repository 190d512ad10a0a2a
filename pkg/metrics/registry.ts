// The Prometheus text exposition (format 0.0.4) of what a program counts: a registry of metric
// families, each writing its samples when scraped. Every number is kept by the part that counts it
// (a typed array bumped on the DNS path, a plain stats object) and read only here; nothing is
// hashed or allocated per count.

export type Labels = Record<string, string>;
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One metric family: its name, help and type, and what it holds at a scrape. */
export interface Collector {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  /** Writes the family's samples (out.sample); may wait for what it reads (another thread's counts). */
  collect(out: Exposition): void | Promise<void>;
}

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
function escapeLabel(v: string): string {
  return /[\\"\n]/.test(v) ? v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n') : v;
}

/** HELP text: backslash and newline escaped. */
function escapeHelp(v: string): string {
  return /[\\\n]/.test(v) ? v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n') : v;
}

/** A sample's value: Prometheus's spelling of the infinities and NaN. */
export function formatValue(v: number): string {
  if (Number.isFinite(v)) return String(v);
  return Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf';
}

/** The text of one scrape, written family by family. */
export class Exposition {
  private text = '';

  /** Starts a family: its HELP and TYPE lines. */
  family(c: Collector): void {
    this.text += `# HELP ${c.name} ${escapeHelp(c.help)}\n# TYPE ${c.name} ${c.type}\n`;
  }

  /** One sample: `name{labels...,extraName="extraValue"} value` (the extra label: a histogram bucket's `le`). */
  sample(name: string, labels: Labels | null, value: number, extraName?: string, extraValue?: string): void {
    let pairs = '';
    if (labels !== null) for (const k in labels) pairs += `${pairs === '' ? '' : ','}${k}="${escapeLabel(labels[k])}"`;
    if (extraName !== undefined) pairs += `${pairs === '' ? '' : ','}${extraName}="${extraValue}"`;
    this.text += pairs === '' ? `${name} ${formatValue(value)}\n` : `${name}{${pairs}} ${formatValue(value)}\n`;
  }

  toString(): string {
    return this.text;
  }
}

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export class Registry {
  readonly contentType = CONTENT_TYPE;
  private readonly families = new Map<string, Collector>();

  /** Adds a family; a second one of the same name is a programming error. */
  register(c: Collector): void {
    if (this.families.has(c.name)) throw new Error(`metric ${c.name} is registered already`);
    this.families.set(c.name, c);
  }

  /** The exposition of every family, in the order they were registered. */
  async metrics(): Promise<string> {
    const out = new Exposition();
    for (const c of this.families.values()) {
      out.family(c);
      const pending = c.collect(out);
      if (pending !== undefined) await pending;
    }
    return out.toString();
  }
}
