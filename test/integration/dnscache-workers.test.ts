// dnscache --workers=2 as a user sees it: two UDP sockets on the one port, every client answered
// whichever thread the kernel gives it, one cache for the process (a question asked through both
// threads is one upstream query), the CHAOS statistics and the SIGUSR1 lines counting the whole
// process, SIGHUP reaching every thread, SIGTERM stopping them all. Clients with fixed source ports
// (dig -b) stay on one thread each (SO_REUSEPORT hashes the 4-tuple); ten such ports land on both.

import t from 'tap';
import type { Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { freePort } from '../helpers/ports.ts';
import { startProgram } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';

const NAMES = 10;
const CLIENTS_LOGGED = 10;

async function dnscache(t: Test, args: string[]): Promise<{ p: Program; port: number }> {
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', '--workers=2', ...args]);
  const m = await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/);
  return { p, port: Number(m[1]) };
}

/** The TXT value of a CHAOS statistics name. */
async function chaos(port: number, name: string): Promise<string> {
  return answers(await dig(port, name, 'TXT', ['-c', 'CH'])).join();
}

/** UDP sockets bound to 127.0.0.1:port, and the pids holding them (ss -p). */
function udpSockets(port: number): string[] {
  return execFileSync('ss', ['-Hulnp', `sport = :${port}`], { encoding: 'utf8' }).split('\n').filter((l) => l.trim() !== '');
}

t.test('--workers=2: two sockets on the port in one process; every client answered; CHAOS statistics of the whole process', async (t) => {
  const u = await startDnsmasq(t, Array.from({ length: NAMES }, (_, i) => `192.0.2.${i + 1} n${i}.example`), ['--local-ttl=300']);
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  const sockets = udpSockets(port);
  t.equal(sockets.length, 2, 'two UDP sockets on the port');
  t.ok(sockets.every((l) => l.includes(`pid=${p.child.pid},`)), 'both held by the one dnscache process');
  for (let i = 0; i < NAMES; i++) {
    const from = ['-b', `127.0.0.1#${await freePort()}`];
    for (let ask = 0; ask < 2; ask++) t.same(answers(await dig(port, `n${i}.example`, 'A', from)), [`192.0.2.${i + 1}`]);
  }
  // One name from ten more clients, whichever threads they reach: one cache for the process.
  for (let i = 0; i < NAMES; i++) t.same(answers(await dig(port, 'n0.example', 'A', ['-b', `127.0.0.1#${await freePort()}`])), ['192.0.2.1']);
  t.equal(await chaos(port, 'hits.bind'), `"${2 * NAMES}"`, "hits.bind: every thread's hits");
  t.equal(await chaos(port, 'misses.bind'), `"${NAMES}"`, 'misses.bind: a question once, whichever thread asked it');
  t.equal(await chaos(port, 'cachesize.bind'), '"150"', 'cachesize.bind: --cache-size');
  t.equal(await chaos(port, 'servers.bind'), `"127.0.0.1#${u.port} ${NAMES} 0"`, 'servers.bind: one upstream query per question');
  p.child.kill('SIGUSR1');
  await p.waitFor(new RegExp(`statistics cacheSize=150 .*hits=${2 * NAMES} misses=${NAMES} `));
  await p.waitFor(new RegExp(`server server=127\\.0\\.0\\.1\\\\?#${u.port} queries=${NAMES} `));
  p.child.kill('SIGTERM');
  t.equal(await p.exited, 0, 'SIGTERM: exit 0');
  t.same(udpSockets(port), [], 'every socket closed');
});

t.test('--workers=2: SIGHUP gives every thread the new servers-file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-dnscache-workers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [a, b] = [await startDnsmasq(t, ['192.0.2.1 www.example.com']), await startDnsmasq(t, ['192.0.2.2 www.example.com'])];
  const file = join(dir, 'servers');
  writeFileSync(file, `server=127.0.0.1#${a.port}\n`);
  const { p, port } = await dnscache(t, [`--servers-file=${file}`]);
  const froms = await Promise.all(Array.from({ length: NAMES }, async () => ['-b', `127.0.0.1#${await freePort()}`]));
  for (const from of froms) t.same(answers(await dig(port, 'www.example.com', 'A', from)), ['192.0.2.1']);
  writeFileSync(file, `server=127.0.0.1#${b.port}\n`);
  p.child.kill('SIGHUP');
  await p.waitFor(/reloaded/);
  // The same clients, so the same threads, each with the name cached before: cleared, and asked anew.
  for (const from of froms) t.same(answers(await dig(port, 'www.example.com', 'A', from)), ['192.0.2.2'], 'the new server, from every thread');
});

t.test('--workers=2 --log-queries: one line per query, whichever thread answered it from the cache', async (t) => {
  const u = await startDnsmasq(t, ['192.0.2.1 www.example.com'], ['--local-ttl=300']);
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--log-queries']);
  // Ten clients land on both threads: the second thread's first ask is a hit of the shared store.
  for (let i = 0; i < CLIENTS_LOGGED; i++) t.same(answers(await dig(port, 'www.example.com', 'A', ['-b', `127.0.0.1#${await freePort()}`])), ['192.0.2.1']);
  await p.waitFor(new RegExp(`(query name=www\\.example\\.com type=1 from=cache[^]*){${CLIENTS_LOGGED - 1}}`));
  const lines = p.output().split('\n').filter((l) => /query name=www\.example\.com/.test(l));
  t.equal(lines.filter((l) => l.includes('from=forwarded')).length, 1, 'asked upstream once');
  t.equal(lines.filter((l) => l.includes('from=cache')).length, CLIENTS_LOGGED - 1, 'every other ask logged as a hit');
});

t.test('--workers=2 on a port another server holds: exit 1 (its SO_REUSEPORT sockets would share it silently)', async (t) => {
  const other = await startDnsmasq(t, []);
  const p = startProgram(t, 'dnscache', ['-k', `--port=${other.port}`, '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', '--workers=2']);
  t.equal(await p.exited, 1);
  t.match(p.output(), /cannot start.*EADDRINUSE/);
});

t.test('--workers: a bad value is a usage error', async (t) => {
  for (const bad of ['--workers=two', '--workers=1000']) {
    const p = startProgram(t, 'dnscache', ['-k', '--port=0', bad]);
    t.equal(await p.exited, 2, bad);
    t.match(p.output(), /bad value for --workers/);
  }
});
