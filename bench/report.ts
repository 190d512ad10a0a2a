// The shared tail of every benchmark: run in a temp dir removed afterwards, then write
// bench/results/<kind>-<time>.{json,md} and print the markdown.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Test } from 'tap';
import { join } from 'node:path';
import { dnsmasqReadableDir } from '../test/helpers/dnsmasq.ts';
import { repoRoot } from './servers.ts';

/**
 * `fn` in a fresh directory under the system temp dir, removed whatever happens. Readable by others:
 * the benchmarks' dnsmasq drops to its own user before it reads its files there, as it does in a pod.
 */
export async function inTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = dnsmasqReadableDir(prefix);
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes the figures and their report under bench/results/ as `<kind>-<when>` and prints the report. */
export function writeResults(kind: string, when: string, figures: object, md: string): void {
  const resultsDir = join(repoRoot, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = when.replace(/[:.]/g, '-');
  writeFileSync(join(resultsDir, `${kind}-${stamp}.json`), JSON.stringify({ when, ...figures }, null, 2) + '\n');
  writeFileSync(join(resultsDir, `${kind}-${stamp}.md`), md);
  console.log('\n' + md);
}

/**
 * A stand-in for the tap Test the test helpers take (they only register teardowns, and say things):
 * benchmarks reuse the helpers outside tap. close() runs the teardowns, the last registered first.
 */
export function benchScope(): { t: Test; close(): Promise<void> } {
  const teardowns: (() => unknown)[] = [];
  const t = {
    teardown: (fn: () => unknown) => teardowns.push(fn),
    passing: () => true,
    comment: (...args: unknown[]) => console.log('#', ...args),
    fail: (why: string) => console.error(`# ${why}`),
    skip: (why: string) => console.error(`# ${why}`),
  } as unknown as Test;
  return {
    t,
    close: async () => {
      while (teardowns.length) await teardowns.pop()!();
    },
  };
}

/** A checkout's commit, and whether its tree differs from it (a build is of the tree). */
export function commitOf(dir: string): string {
  // A copy without .git (bench/bare/: a bare machine's run) says which commit it was packed from.
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  const head = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
  return dirty ? `${head} + uncommitted changes` : head;
}
