// A flooding asker for the fairness tests: new names from one loopback address at a fixed rate,
// until stopped (a teardown stops it too).

import { createSocket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { Test } from 'tap';
import { Type } from '../../pkg/dns/constants.ts';
import { query } from './dns-server.ts';
import { dig } from './dig.ts';

/** Sends `<n>.<zone>` for n = 0, 1, ... from `from` to 127.0.0.1:`port` at `perSecond`; resolves with the function that stops it. */
export async function floodNames(t: Test, port: number, from: string, perSecond: number, zone: string): Promise<() => void> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, from, r));
  let n = 0;
  const timer = setInterval(() => {
    for (let i = 0; i < perSecond / 100; i++) s.send(query(`f${n++}.${zone}`, Type.A, n & 0xffff), port, '127.0.0.1');
  }, 10);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    s.close();
  };
  t.teardown(stop);
  return stop;
}

/** `names` asked by dig from `from`, one after another (2 s each at most): how many were answered (NOERROR or NXDOMAIN), and the slowest (ms). */
export async function askFrom(port: number, from: string, names: readonly string[]): Promise<{ answered: number; slowestMs: number }> {
  let answered = 0;
  let slowestMs = 0;
  for (const name of names) {
    const started = performance.now();
    const r = await dig(port, name, 'A', ['-b', from, '+timeout=2']).catch(() => null);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    if (r?.status === 'NOERROR' || r?.status === 'NXDOMAIN') answered++;
  }
  return { answered, slowestMs };
}
