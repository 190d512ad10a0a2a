// Small figures every benchmark takes from its rounds.

/** The middle value (the upper one of an even count); NaN for none. */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The p-th percentile (0-100, nearest rank from below) of xs, NaNs left out; NaN for none. */
export function percentile(xs: readonly number[], p: number): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** A latency sample's figures (ms): p50, p90, p99, max, and how many never came (NaN). */
export interface LatencySummary {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  timeouts: number;
}

export function latencySummary(xs: readonly number[]): LatencySummary {
  return { p50Ms: percentile(xs, 50), p90Ms: percentile(xs, 90), p99Ms: percentile(xs, 99), maxMs: percentile(xs, 100), timeouts: xs.filter(Number.isNaN).length };
}
