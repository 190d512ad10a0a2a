// Where test/monitoring/build-promtool.sh caches promtool, and whether a test may use it: in CI it must
// be there (a missing build fails, never skips); elsewhere a machine without Go skips, loudly.

import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { goAvailable } from '../e2e/harness/binaries.ts';

/** The Prometheus module version built (Prometheus v3.x is published as v0.3xx); the script's default. */
export const prometheusModuleVersion = 'v0.316.0';

export function promtoolBin(): string {
  const root = process.env.KUBE_DNS_TS_CACHE || join(homedir(), '.cache', 'kube-dns-ts');
  return join(root, `promtool-${prometheusModuleVersion}`, 'bin', 'promtool');
}

/** True when the test may go on; otherwise it has failed or skipped `t` with the reason. */
export function promtoolCanRun(t: Test): boolean {
  try {
    accessSync(promtoolBin(), constants.X_OK);
    return true;
  } catch {
    const why = `promtool not built: ${promtoolBin()} (run: bash test/monitoring/build-promtool.sh, needs Go)`;
    if (process.env.CI !== 'true' && !goAvailable()) {
      console.error(`\n*** SKIPPING monitoring tests: Go is not installed (${why}) ***\n`);
      t.skip(why, () => {});
      return false;
    }
    t.fail(`${why}; npm test builds it first, in pretest`);
    return false;
  }
}

const PROMQL_WORDS = new Set(['sum', 'by', 'rate', 'increase', 'or', 'and', 'without', 'on', 'ignoring']);

/** Metric names a PromQL expression reads: identifiers followed by a selector, a range, or a comparison. */
export function metricNames(expr: string): string[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(?=\s*(\{|\[|==|>|<))/g)].map((m) => m[1]).filter((n) => !PROMQL_WORDS.has(n));
}
