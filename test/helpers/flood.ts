// For the fairness tests: a costly handler, what steering leaves in /proc/net/udp, a flooding asker (new names from one loopback address at a fixed rate, by
// dnsperf), a well-behaved one (dig, one question after another), and an upstream whose answers queue.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Test } from 'tap';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Answer, Query } from '../../pkg/dns/server.ts';
import { dig } from './dig.ts';
import { makeAnswer, makeQuery } from './packets.ts';
import { frame, splitFrames } from './tcp-frames.ts';
import { udpUpstream } from './upstreams.ts';

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

/**
 * `names` asked by dig from `from`, one after another (2 s a try, `tries` at most; a pod's resolver
 * tries twice): how many got a reply (any rcode), and the slowest (ms).
 */
export async function askFrom(port: number, from: string, names: readonly string[], tries = 1): Promise<{ answered: number; slowestMs: number }> {
  let answered = 0;
  let slowestMs = 0;
  for (const name of names) {
    const started = performance.now();
    const r = await dig(port, name, 'A', ['-b', from, '+timeout=2', `+tries=${tries}`]).catch(() => null);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    if (r !== null && r.status !== '') answered++;
  }
  return { answered, slowestMs };
}

/** Sockets on `port` connected to `remote` (an IPv4 address), as /proc/net/udp lists them: flows steered to a queue of their own. */
export function connectedTo(port: number, remote: string): number {
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  const remoteHex = hex(remote.split('.').reduceRight((n, b) => n * 256 + Number(b), 0), 8);
  return readFileSync('/proc/net/udp', 'latin1')
    .split('\n')
    .filter((l) => {
      const f = l.trim().split(/\s+/);
      return f[1]?.endsWith(`:${hex(port, 4)}`) && f[2]?.startsWith(`${remoteHex}:`);
    }).length;
}

/** A handler answering every name with one A record after 0.3 ms of work on the thread: misses that cost. */
export function costly(q: Query): Answer {
  const until = performance.now() + 0.3;
  while (performance.now() < until);
  const m = emptyMessage();
  m.answers.push({ name: q.qname, type: Type.A, class: Class.IN, ttl: 60, data: { address: '192.0.2.1' } });
  return { message: m };
}

/**
 * A burst of `count` pipelined misses (new names) written at once on `socket`, and what came back within
 * a second: how many answers, and how many of them more than half a second after the burst was sent
 * (a connection held at its share a window is still answered then; one read through at once is not).
 */
export async function pipelinedBurst(socket: Socket, count: number): Promise<{ answered: number; late: number; firstMs: number }> {
  const answeredAt: number[] = [];
  splitFrames(socket, () => answeredAt.push(performance.now()));
  const sent = performance.now();
  socket.write(Buffer.concat(Array.from({ length: count }, (_, id) => frame(makeQuery(`b${id}.burst.test`, id)))));
  await new Promise((r) => setTimeout(r, 1000));
  return { answered: answeredAt.length, late: answeredAt.filter((at) => at - sent > 500).length, firstMs: Math.round((answeredAt[0] ?? sent) - sent) };
}

/**
 * A test double for a loaded upstream (a real kube-dns starved of CPU cannot be made to be on cue):
 * it answers in order, NXDOMAIN, one query each 2 ms; for each query whose name starts `other` it
 * notes how many were waiting ahead of it (`ahead`).
 */
export async function queuingUpstream(t: Test): Promise<{ port: number; ahead: number[] }> {
  const waiting: { msg: Buffer; send: (reply: Buffer) => void }[] = [];
  const ahead: number[] = [];
  const up = await udpUpstream(t, (msg, _rinfo, send) => {
    if (msg.toString('latin1', 13, 13 + msg[12]).startsWith('other')) ahead.push(waiting.length);
    waiting.push({ msg, send });
  });
  const answering = setInterval(() => {
    const q = waiting.shift();
    if (q !== undefined) q.send(makeAnswer(q.msg, { rcode: 3 }));
  }, 2);
  t.teardown(() => clearInterval(answering));
  return { port: up.port, ahead };
}

/**
 * A TCP flood from 127.0.0.66 at `port` (dnsperf, 10 connections of 100 pipelined each: a thousand
 * misses in flight whenever they are all forwarded), and meanwhile another asker (127.0.0.2, dig)
 * asking new names `other<n>` one after another, until its last three each waited behind fewer than
 * `below` at `upstream` (queuingUpstream), 15 s at most (the thousand first forwarded are answered
 * in 2 s, or more on a loaded machine): how many each of them waited behind.
 */
export async function otherAmidTcpFlood(t: Test, port: number, upstream: { ahead: number[] }, below: number): Promise<number[]> {
  await floodNames(t, port, '127.0.0.66', 50_000, 'flood.example.com', ['-m', 'tcp', '-c', '10', '-q', '1000']);
  const until = performance.now() + 15_000;
  const settled = () => upstream.ahead.length >= 3 && upstream.ahead.slice(-3).every((n) => n < below);
  for (let i = 0; performance.now() < until && !settled(); i++) await askFrom(port, '127.0.0.2', [`other${i}.example.com`]);
  return upstream.ahead;
}
