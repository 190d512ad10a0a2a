// For the fairness tests: a flooding asker (new names from one loopback address at a fixed rate, by
// dnsperf), and a well-behaved one (dig, one question after another).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Test } from 'tap';
import { dig } from './dig.ts';

/**
 * dnsperf (a process of its own, as a flooding pod is) sending `<n>.<zone>` for n = 0, 1, ... from
 * `from` to 127.0.0.1:`port` at `perSecond`, at most 20 s; resolves with the function that stops it
 * (a teardown stops it too). Its answers it does not wait for: it keeps the rate whatever comes back.
 * `extra`: more dnsperf arguments (`-E 8:<hex>`: a Client Subnet, as our caches send).
 */
export async function floodNames(t: Test, port: number, from: string, perSecond: number, zone: string, extra: string[] = []): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-flood-'));
  const names = join(dir, 'names');
  writeFileSync(names, Array.from({ length: 200_000 }, (_, i) => `f${i}.${zone} A`).join('\n') + '\n');
  const child = spawn('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-a', from, '-d', names, '-Q', String(perSecond), '-q', '100000', '-t', '1', '-l', '20', '-n', '1', ...extra], { stdio: 'ignore' });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  t.teardown(stop);
  // dnsperf reads its input before it sends.
  await new Promise((r) => setTimeout(r, 300));
  return stop;
}

/** `names` asked by dig from `from`, one after another (2 s each at most): how many got a reply (any rcode), and the slowest (ms). */
export async function askFrom(port: number, from: string, names: readonly string[]): Promise<{ answered: number; slowestMs: number }> {
  let answered = 0;
  let slowestMs = 0;
  for (const name of names) {
    const started = performance.now();
    const r = await dig(port, name, 'A', ['-b', from, '+timeout=2']).catch(() => null);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    if (r !== null && r.status !== '') answered++;
  }
  return { answered, slowestMs };
}
