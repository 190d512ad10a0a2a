// npm run bench:scale: how answering scales with the threads a server is given, on whatever cores this
// machine has. The servers are pinned (taskset) to the first half of the CPUs, dnsperf to the other
// half. At 1, 2, 4, 8 threads, as many as fit: dnscache --workers=N and CoreDNS 1.15 (cache + forward,
// GOMAXPROCS=N), both in front of one upstream dnsmasq, every query a cache hit (NAMES names, asked
// once before); real dnsmasq (one thread) and kube-dns (one thread today: its --workers is issue
// 20's next part) beside them. Each point: QPS (dnsperf's maximum), CPU microseconds per query, RSS;
// rounds alternated (BENCH_ROUNDS, 2). Because a 2-core machine can show one pinned thread only: CPU
// per query of dnscache at 1 and 2 threads under a fixed offered load (BENCH_SCALE_RATE queries/s),
// every thread on the same server CPU: what the threads themselves cost. Last, memory: kube-dns with
// 10,000 headless Services of 5 endpoints (bench:api's fixture) at 1 and 4 threads, RSS after the
// sync and after every name was asked (each thread then holds answers).
// BENCH_SCALE_TCP=1: every query over TCP (dnsperf -m tcp, a connection per client), the memory part left out.
// Writes bench/results/scale-<date>.{json,md} (BENCH_SCALE_NAME=scale-16core on a bigger machine;
// scale-tcp-<date> over TCP).

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { corednsBin } from './api-servers.ts';
import { dnsperf } from './dnsperf.ts';
import type { PerfResult } from './dnsperf.ts';
import { makeCluster } from './fixtures.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { cpuTimeMs, programArgs, repoRoot, rssMiB, startDnsmasq, startKubeDns, stopper, waitForLine } from './servers.ts';
import type { Running } from './servers.ts';
import { median } from './stats.ts';
import { freePort } from '../test/helpers/ports.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RATE = Number(process.env.BENCH_SCALE_RATE ?? 20_000);
const NAMES = 2000;
const CPUS = availableParallelism();
const SERVER_CPUS = Math.max(1, Math.floor(CPUS / 2));
const PERF_CPUS = CPUS > 1 ? `${SERVER_CPUS}-${CPUS - 1}` : '0';
const THREADS = [1, 2, 4, 8].filter((n) => n <= SERVER_CPUS);
const TCP = process.env.BENCH_SCALE_TCP === '1';

interface Point {
  system: string;
  threads: number;
  qps: number[];
  cpuUsPerQuery: number[];
  rssMiB: number;
}

/** `argv` pinned to CPUs 0..threads-1, with `env`; resolved once `ready` is in its output. */
async function pinned(name: string, argv: string[], threads: number, ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const child = spawn('taskset', ['-c', threads === 1 ? '0' : `0-${threads - 1}`, ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const stop = stopper(child);
  try {
    await waitForLine(child, ready, name);
    return { name, port: 0, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function dnscache(port: number, upstream: number, threads: number): Promise<Running> {
  const args = ['-k', `--port=${port}`, '--listen-address=127.0.0.1', '--no-resolv', '--cache-size=10000', `--server=127.0.0.1#${upstream}`, '--log-facility=-', `--workers=${threads}`];
  return pinned('dnscache', [process.execPath, ...programArgs('dnscache'), ...args], threads, /listening address=/);
}

async function coredns(bin: string, dir: string, port: number, upstream: number, threads: number): Promise<Running> {
  const corefile = join(dir, `Corefile-${port}`);
  writeFileSync(corefile, `.:${port} {\n  bind 127.0.0.1\n  cache 300\n  forward . 127.0.0.1:${upstream}\n}\n`);
  const r = await pinned('CoreDNS', [bin, '-conf', corefile], threads, /CoreDNS-/, { GOMAXPROCS: String(threads) });
  await sleep(200);
  return r;
}

function dnsmasqCache(dir: string, port: number, upstream: number): Promise<Running> {
  const args = ['-k', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--cache-size=10000', `--server=127.0.0.1#${upstream}`, '--log-facility=-', `--pid-file=${join(dir, `dnsmasq-${port}.pid`)}`, '--conf-file=/dev/null', '--no-hosts'];
  return pinned('dnsmasq', ['/usr/sbin/dnsmasq', ...args], 1, /using nameserver/);
}

function kubeDns(clusterFile: string, port: number): Promise<Running> {
  const args = [`--cluster-file=${clusterFile}`, '--dns-bind-address=127.0.0.1', `--dns-port=${port}`, '--http-bind-address=127.0.0.1', '--healthz-port=0', '--lameduck=0s'];
  return pinned('kube-dns', [process.execPath, ...programArgs('kube-dns'), ...args], 1, /initial sync done/);
}

/** One dnsperf run against `server` on `port` from the dnsperf CPUs; its QPS and the server's CPU per query. */
async function measure(server: Running, port: number, queries: string, extra: string[]): Promise<{ perf: PerfResult; cpuUs: number }> {
  const before = cpuTimeMs(server.pid);
  const perf = await dnsperf(port, queries, SECONDS, extra, PERF_CPUS);
  const after = cpuTimeMs(server.pid);
  return { perf, cpuUs: ((after.user + after.sys - before.user - before.sys) * 1000) / Math.max(1, perf.completed) };
}

const MEMORY_THREADS = [1, 4];

/** kube-dns's RSS with bench:api's 10,000 Services and 50,000 endpoints at `threads`: after the sync, and after dnsperf asked every name. */
async function kubeDnsMemory(threads: number): Promise<{ threads: number; afterSyncMiB: number; afterLoadMiB: number }> {
  return inTempDir('kdt-bench-scale-rss-', async (dir) => {
    const c = makeCluster(10_000, 5);
    const [cluster, queries] = [join(dir, 'cluster.json'), join(dir, 'queries')];
    writeFileSync(cluster, c.yaml);
    writeFileSync(queries, c.queries);
    const kd = await startKubeDns(dir, cluster, [`--workers=${threads}`, '--lameduck=0s']);
    try {
      const afterSyncMiB = Math.round(rssMiB(kd.pid));
      await dnsperf(kd.port, queries, SECONDS, ['-T', '1', '-c', '16']);
      return { threads, afterSyncMiB, afterLoadMiB: Math.round(rssMiB(kd.pid)) };
    } finally {
      await kd.stop();
    }
  });
}

function memoryTable(memory: { threads: number; afterSyncMiB: number; afterLoadMiB: number }[]): string {
  return `
kube-dns with 10,000 headless Services of 5 endpoints each (bench:api's fixture), not pinned; RSS after the first sync and after dnsperf asked every name for ${SECONDS} s (16 client sockets: every thread asked):

| --workers | RSS after sync (MiB) | RSS after every name asked (MiB) |
|---|---|---|
${memory.map((m) => `| ${m.threads} | ${m.afterSyncMiB} | ${m.afterLoadMiB} |`).join('\n')}
`;
}

async function main(): Promise<void> {
  const when = new Date().toISOString();
  const coreBin = corednsBin();
  const perfThreads = Math.max(1, CPUS - SERVER_CPUS);
  // 16 sockets a dnsperf thread: SO_REUSEPORT hashes each source port to one server thread, and with
  // few of them the busiest thread caps the whole (32 ports over 8 threads leave some with twice the mean).
  const clients = Math.min(256, perfThreads * 16);
  const mode = TCP ? ['-m', 'tcp'] : [];
  const maxLoad = ['-T', String(perfThreads), '-c', String(clients), '-q', '500', ...mode];
  const points: Point[] = [];
  const fixed: { threads: number; cpuUsPerQuery: number[]; qps: number[]; rssMiB: number }[] = [];
  await inTempDir('kdt-bench-scale-', async (dir) => {
    // The same names as kube-dns's Services, in the upstream's hosts file: one query file for all.
    const fixture = makeCluster(NAMES);
    const [hosts, queries, cluster] = [join(dir, 'hosts'), join(dir, 'queries'), join(dir, 'cluster.json')];
    writeFileSync(hosts, fixture.hosts);
    writeFileSync(queries, fixture.queries);
    writeFileSync(cluster, fixture.yaml);
    const upstreamPort = await freePort();
    const upstream = await startDnsmasq(dir, hosts, upstreamPort, ['--local-ttl=3600']);
    try {
      const systems: { name: string; threads: number; start: (port: number) => Promise<Running>; queries: string }[] = [
        { name: 'dnsmasq', threads: 1, start: (p) => dnsmasqCache(dir, p, upstreamPort), queries },
        { name: 'kube-dns', threads: 1, start: (p) => kubeDns(cluster, p), queries },
        ...THREADS.flatMap((n) => [
          { name: 'dnscache', threads: n, start: (p: number) => dnscache(p, upstreamPort, n), queries },
          ...(coreBin === null ? [] : [{ name: 'CoreDNS', threads: n, start: (p: number) => coredns(coreBin, dir, p, upstreamPort, n), queries }]),
        ]),
      ];
      for (const s of systems) points.push({ system: s.name, threads: s.threads, qps: [], cpuUsPerQuery: [], rssMiB: 0 });
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, s] of systems.entries()) {
          const port = await freePort();
          const server = await s.start(port);
          try {
            await dnsperf(port, s.queries, 2, maxLoad, PERF_CPUS); // every name asked once: hits from here on
            const { perf, cpuUs } = await measure(server, port, s.queries, maxLoad);
            points[i].qps.push(Math.round(perf.qps));
            points[i].cpuUsPerQuery.push(Math.round(cpuUs * 10) / 10);
            points[i].rssMiB = Math.round(rssMiB(server.pid));
            console.log(`# round ${round + 1}: ${s.name} at ${s.threads}: ${Math.round(perf.qps)} QPS, ${cpuUs.toFixed(1)} us CPU/query, lost ${perf.lost}`);
          } finally {
            await server.stop();
          }
        }
        for (const n of [1, 2]) {
          const port = await freePort();
          // Both threads on CPU 0: the cost of threads, not more CPU.
          const server = await pinned('dnscache', [process.execPath, ...programArgs('dnscache'), '-k', `--port=${port}`, '--listen-address=127.0.0.1', '--no-resolv', '--cache-size=10000', `--server=127.0.0.1#${upstreamPort}`, '--log-facility=-', `--workers=${n}`], 1, /listening address=/);
          try {
            await dnsperf(port, queries, 2, maxLoad, PERF_CPUS);
            const { perf, cpuUs } = await measure(server, port, queries, ['-T', String(perfThreads), '-c', String(clients), '-Q', String(RATE), ...mode]);
            const f = fixed.find((x) => x.threads === n) ?? (fixed.push({ threads: n, cpuUsPerQuery: [], qps: [], rssMiB: 0 }), fixed.at(-1)!);
            f.rssMiB = Math.round(rssMiB(server.pid));
            f.cpuUsPerQuery.push(Math.round(cpuUs * 10) / 10);
            f.qps.push(Math.round(perf.qps));
            console.log(`# round ${round + 1}: dnscache --workers=${n} on one CPU at ${RATE}/s offered: ${cpuUs.toFixed(1)} us CPU/query (${Math.round(perf.qps)} answered/s)`);
          } finally {
            await server.stop();
          }
        }
      }
    } finally {
      await upstream.stop();
    }
  });
  const memory = [];
  for (const n of TCP ? [] : MEMORY_THREADS) {
    memory.push(await kubeDnsMemory(n));
    console.log(`# kube-dns with 10,000 services at ${n} thread(s): RSS ${memory.at(-1)!.afterSyncMiB} MiB after the sync, ${memory.at(-1)!.afterLoadMiB} MiB after every name was asked`);
  }
  const load = `${commitOf(repoRoot)}. node ${process.version}, ${CPUS} CPUs (${cpus()[0]?.model}), load average at start ${loadavg()[0].toFixed(2)}. Servers pinned to CPUs 0..threads-1 (of 0-${SERVER_CPUS - 1}), dnsperf to ${PERF_CPUS} (-T ${perfThreads} -c ${clients} -q 500${TCP ? ' -m tcp: a TCP connection per client' : ''}) for ${SECONDS} s per run, after a 2 s pass that asks every name once; ${ROUNDS} rounds, in order. ${NAMES} names, every query a cache hit: dnscache (--cache-size=10000 --workers=N) and CoreDNS ${coreBin === null ? '(not built: bench/build-coredns.sh)' : '1.15'} (\`cache 300\`, \`forward\`, GOMAXPROCS=N) in front of one dnsmasq (hosts file, --local-ttl=3600), real dnsmasq as a cache the same way; kube-dns (one thread) answering ${NAMES} Services from --cluster-file.`;
  const rows = points.map((p) => `| ${p.system} | ${p.threads} | ${p.qps.join(' / ')} | ${p.cpuUsPerQuery.join(' / ')} | ${p.rssMiB} |`);
  const base = (system: string) => median(points.find((p) => p.system === system && p.threads === 1)?.qps ?? []);
  const ratios = THREADS.filter((n) => n > 1).map((n) => {
    const q = median(points.find((p) => p.system === 'dnscache' && p.threads === n)!.qps);
    return `dnscache at ${n}: ${(q / base('dnscache')).toFixed(2)}× its 1-thread QPS, ${(q / base('dnsmasq')).toFixed(2)}× dnsmasq`;
  });
  const fixedRows = fixed.map((f) => `| ${f.threads} | ${f.cpuUsPerQuery.join(' / ')} | ${f.qps.join(' / ')} | ${f.rssMiB} |`);
  const md = `# Answering with N threads (${when})

${load}

| server | threads | QPS, per round | CPU µs per query, per round | RSS (MiB) |
|---|---|---|---|---|
${rows.join('\n')}

${ratios.length > 0 ? ratios.join('; ') + '.' : `With ${CPUS} CPUs, one server CPU: 1 thread only (more would share the CPU with each other, not add one).`}

dnscache at a fixed offered load of ${RATE} queries/s, every thread on CPU 0 (what the threads cost, not what they add):

| --workers | CPU µs per query, per round | answered/s, per round | RSS (MiB) |
|---|---|---|---|
${fixedRows.join('\n')}
${memory.length === 0 ? '' : memoryTable(memory)}`;
  writeResults(process.env.BENCH_SCALE_NAME ?? (TCP ? 'scale-tcp' : 'scale'), when, { load, points, fixed, memory }, md);
}

await main();
