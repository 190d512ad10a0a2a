// npm run bench (after bench/run.ts): dnscache beside a real dnsmasq on the same dnsmasq arguments,
// both caching in front of one upstream (a third dnsmasq answering a hosts file):
//   1. cache-hit QPS under dnsperf (one client socket, then four), alternated rounds, with the bare
//      Node UDP socket (bench/bare-udp.ts) as the ceiling for any Node server here;
//   2. the latency a cache miss adds: never-asked names, one at a time, through each cache, minus
//      the same number straight to the upstream;
// (Queries lost while the nanny applies config changes moved to the hostile part, bench/hostile.ts.)
// Writes bench/results/dnscache-<date>.{json,md}. Ratios matter: the machine may be shared.
//
// Env: BENCH_ROUNDS (3), BENCH_SECONDS (6), BENCH_DNSCACHE_NAMES (2000), BENCH_MISSES (3000; 0 skips
// part 2), BENCH_DNSCACHE_CPU_PROF=<dir> (run dnscache under --cpu-prof; read the profile with
// bench/dnscache-profile.ts).

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import type { PerfResult } from './dnsperf.ts';
import { cpuTimeMs, rssMiB, startBareUdp, startDnsmasq } from './servers.ts';
import { inTempDir, writeResults } from './report.ts';
import type { Running } from './servers.ts';
import { cacheArgs, startDnscache, startDnsmasqCache } from './dnscache-servers.ts';
import { quantile, timeMisses } from './dnscache-miss.ts';
import type { MissTimes } from './dnscache-miss.ts';
import { freePort } from '../test/helpers/ports.ts';
import { median } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const NAMES = Number(process.env.BENCH_DNSCACHE_NAMES ?? 2000);
const MISSES = Number(process.env.BENCH_MISSES ?? 3000);
const MISS_WARMUP = 200;
const CPU_PROF = process.env.BENCH_DNSCACHE_CPU_PROF;
/** dnsperf client sockets (source ports): one, then several as pods are. */
const CLIENTS = [1, 4] as const;
const SERVERS = ['dnscache', 'dnsmasq', 'bare-node'] as const;
type ServerName = (typeof SERVERS)[number];
const CACHES = ['dnscache', 'dnsmasq'] as const;
type CacheName = (typeof CACHES)[number];
/** The upstream answers every name under this with 192.0.2.1, asked or not. */
const MISS_DOMAIN = 'miss.bench';


/** A CHAOS TXT counter (hits.bind, misses.bind...), as both caches answer them. */
function chaosCounter(port: number, name: string): number {
  const out = execFileSync('dig', [`@127.0.0.1`, '-p', String(port), '+short', '+tries=1', '+time=2', 'CH', 'TXT', name], { encoding: 'utf8' });
  return Number(out.trim().replace(/"/g, ''));
}

const counters = (port: number) => ({ hits: chaosCounter(port, 'hits.bind'), misses: chaosCounter(port, 'misses.bind') });

/** One dnsperf run, with the CPU the server spent on it. */
interface HitRun extends PerfResult {
  /** Server CPU per answered query, microseconds. */
  userUs: number;
  sysUs: number;
  /** Server CPU time over the run's length (1 = one core busy all along). */
  busy: number;
}

interface HitRow {
  clients: number;
  runs: Record<ServerName, HitRun[]>;
}

async function measuredRun(s: Running, queries: string, clients: number): Promise<HitRun> {
  const before = cpuTimeMs(s.pid);
  const perf = await dnsperf(s.port, queries, SECONDS, ['-c', String(clients)]);
  const after = cpuTimeMs(s.pid);
  const user = after.user - before.user;
  const sys = after.sys - before.sys;
  return { ...perf, userUs: (1000 * user) / perf.completed, sysUs: (1000 * sys) / perf.completed, busy: (user + sys) / (1000 * SECONDS) };
}

interface MissRow {
  target: string;
  answered: number;
  lost: number;
  bad: number;
  p50Ms: number;
  p99Ms: number;
  addedP50Ms: number;
  addedP99Ms: number;
}

interface Results {
  hits: HitRow[];
  /** Counted by each cache over the measured rounds (misses should be 0: every query a hit). */
  cacheCounters: Record<CacheName, { hits: number; misses: number }>;
  rssMiB: Record<CacheName, number>;
  warmFill: Record<CacheName, PerfResult>;
  misses: MissRow[];
}

function missRows(times: Record<string, MissTimes>): MissRow[] {
  const direct = times.direct;
  return Object.entries(times).map(([target, t]) => {
    const p50 = quantile(t.ms, 0.5);
    const p99 = quantile(t.ms, 0.99);
    return {
      target,
      answered: t.ms.length,
      lost: t.lost,
      bad: t.bad,
      p50Ms: p50,
      p99Ms: p99,
      addedP50Ms: p50 - quantile(direct.ms, 0.5),
      addedP99Ms: p99 - quantile(direct.ms, 0.99),
    };
  });
}

async function bench(dir: string): Promise<Results> {
  const c = makeCluster(NAMES);
  const hosts = join(dir, 'hosts');
  const queries = join(dir, 'queries');
  writeFileSync(hosts, c.hosts);
  writeFileSync(queries, c.queries);
  const started: Running[] = [];
  // Every server is stopped in the finally below, even when a later one fails to start.
  const start = async (s: Promise<Running>): Promise<Running> => {
    const running = await s;
    started.push(running);
    return running;
  };
  try {
    const upstreamDir = join(dir, 'upstream');
    mkdirSync(upstreamDir);
    // Hosts answers carry --local-ttl (0 by default, which no cache keeps).
    const upstream = await start(startDnsmasq(upstreamDir, hosts, await freePort(), ['--local-ttl=3600', `--address=/${MISS_DOMAIN}/192.0.2.1`]));
    const profFlags = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROF)}`] : [];
    const servers: Record<ServerName, Running> = {
      dnscache: await start(startDnscache(dir, await freePort(), upstream.port, profFlags)),
      dnsmasq: await start(startDnsmasqCache(dir, await freePort(), upstream.port)),
      'bare-node': await start(startBareUdp(hosts, await freePort())),
    };

    // Fill the caches with one pass over the names, gently (dnsmasq forwards at most 150 at once
    // and drops the rest), then a short untimed run on every server so the hit path is compiled.
    const warmFill = {} as Results['warmFill'];
    for (const name of CACHES) {
      warmFill[name] = await dnsperf(servers[name].port, queries, 120, ['-n', '1', '-q', '20']);
      console.log(`  warm fill ${name}: ${warmFill[name].completed}/${warmFill[name].sent} answered`);
    }
    for (const name of SERVERS) await dnsperf(servers[name].port, queries, 2);

    const before = { dnscache: counters(servers.dnscache.port), dnsmasq: counters(servers.dnsmasq.port) };
    const hits: HitRow[] = CLIENTS.map((clients) => ({ clients, runs: { dnscache: [], dnsmasq: [], 'bare-node': [] } }));
    for (let r = 0; r < ROUNDS; r++) {
      for (const row of hits) {
        // A different server goes first each round.
        const order = SERVERS.map((_, i) => SERVERS[(i + r) % SERVERS.length]);
        for (const name of order) row.runs[name].push(await measuredRun(servers[name], queries, row.clients));
        console.log(`  round ${r + 1}, ${row.clients} client socket(s): ${SERVERS.map((n) => `${n} ${row.runs[n].at(-1)!.qps.toFixed(0)}`).join(', ')} QPS`);
      }
    }
    const cacheCounters = {} as Results['cacheCounters'];
    for (const name of CACHES) {
      const after = counters(servers[name].port);
      cacheCounters[name] = { hits: after.hits - before[name].hits, misses: after.misses - before[name].misses };
    }
    const rss = { dnscache: rssMiB(servers.dnscache.pid), dnsmasq: rssMiB(servers.dnsmasq.pid) };

    let misses: MissRow[] = [];
    if (MISSES > 0) {
      console.log(`  cache misses: ${MISSES} never-asked names per target, one at a time`);
      const times = await timeMisses(
        [
          { name: 'direct', port: upstream.port },
          { name: 'dnscache', port: servers.dnscache.port },
          { name: 'dnsmasq', port: servers.dnsmasq.port },
        ],
        MISSES,
        MISS_WARMUP,
      );
      misses = missRows(times);
      for (const m of misses) console.log(`  ${m.target}: p50 ${m.p50Ms.toFixed(3)} ms, p99 ${m.p99Ms.toFixed(3)} ms`);
    }
    return { hits, cacheCounters, rssMiB: rss, warmFill, misses };
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

const ms = (x: number): string => `${x.toFixed(3)} ms`;

function report(r: Results): string {
  const qps = (row: HitRow, n: ServerName) => median(row.runs[n].map((p) => p.qps));
  const lost = (row: HitRow, n: ServerName) => row.runs[n].reduce((s, p) => s + p.lost, 0);
  const lines = [
    '## Cache hits',
    '',
    '| dnsperf client sockets | dnscache QPS | dnsmasq QPS | bare Node QPS | dnscache / bare Node (goal ≥ 0.9) | dnscache / dnsmasq | dnsmasq / bare Node |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const row of r.hits) {
    const [d, m, b] = SERVERS.map((n) => qps(row, n));
    lines.push(`| ${row.clients} | ${d.toFixed(0)} | ${m.toFixed(0)} | ${b.toFixed(0)} | **${(d / b).toFixed(2)}** | **${(d / m).toFixed(2)}** | ${(m / b).toFixed(2)} |`);
  }
  lines.push(
    '',
    'Server CPU per answered query (median over rounds; user + system µs) and CPU busy over the run (1.00 = one core all along):',
    '',
    '| dnsperf client sockets | dnscache | dnsmasq | bare Node |',
    '|---|---|---|---|',
  );
  for (const row of r.hits) {
    const cell = (n: ServerName) => {
      const runs = row.runs[n];
      return `${median(runs.map((x) => x.userUs)).toFixed(1)} + ${median(runs.map((x) => x.sysUs)).toFixed(1)} µs, busy ${median(runs.map((x) => x.busy)).toFixed(2)}`;
    };
    lines.push(`| ${row.clients} | ${SERVERS.map(cell).join(' | ')} |`);
  }
  const lostCells = r.hits.map((row) => `${row.clients} socket(s): ${SERVERS.map((n) => `${n} ${lost(row, n)}`).join(', ')}`).join('; ');
  lines.push(
    '',
    `Counted by the caches over the measured rounds (CHAOS hits.bind / misses.bind): dnscache ${r.cacheCounters.dnscache.hits} hits, ${r.cacheCounters.dnscache.misses} misses; dnsmasq ${r.cacheCounters.dnsmasq.hits} hits, ${r.cacheCounters.dnsmasq.misses} misses.`,
    `dnsperf queries lost over all rounds: ${lostCells}.`,
    `RSS after the rounds: dnscache ${r.rssMiB.dnscache.toFixed(0)} MiB, dnsmasq ${r.rssMiB.dnsmasq.toFixed(0)} MiB.`,
  );
  if (r.misses.length > 0) {
    const n = r.misses[0].answered + r.misses[0].lost + r.misses[0].bad;
    lines.push(
      '',
      '## Cache-miss latency',
      '',
      `${n} never-asked names per target (\`<n>.${MISS_DOMAIN}\`, which the upstream answers by --address), one query in flight, from a Node dgram client (bench/dnscache-miss.ts), targets taken in turn for every name, after ${MISS_WARMUP} untimed ones. Added = the percentile through the cache minus the same percentile straight to the upstream.`,
      '',
      '| target | p50 | p99 | added p50 | added p99 | lost / bad |',
      '|---|---|---|---|---|---|',
    );
    for (const m of r.misses) {
      const added = m.target === 'direct' ? ['—', '—'] : [`**${ms(m.addedP50Ms)}**`, `**${ms(m.addedP99Ms)}**`];
      lines.push(`| ${m.target === 'direct' ? 'direct to the upstream' : m.target} | ${ms(m.p50Ms)} | ${ms(m.p99Ms)} | ${added[0]} | ${added[1]} | ${m.lost} / ${m.bad} |`);
    }
  }
  return lines.join('\n');
}

const dnsmasqVersion = /version (\S+)/.exec(execFileSync('/usr/sbin/dnsmasq', ['--version'], { encoding: 'utf8' }))?.[1] ?? '?';
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`bench:dnscache: ${ROUNDS} rounds of ${SECONDS}s per server and client count, ${NAMES} names, ${cpus().length} CPUs, node ${process.version}, dnsmasq ${dnsmasqVersion}, load ${load}`);
const results: Results = await inTempDir('kdt-bench-dnscache-', bench);
const when = new Date().toISOString();
const args = cacheArgs(0, 0, '<own>').join(' ').replace('--port=0', '--port=<own>').replace('#0', '#<upstream>');
const md = `# dnscache vs dnsmasq (${when})

node ${process.version} (dnscache with its production flags), dnsmasq ${dnsmasqVersion}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${load}. dnsperf -T 1 -q 200 -l ${SECONDS}, ${ROUNDS} alternated rounds (medians), A queries for ${NAMES} names in random order, every one a cache hit (the caches were filled by one pass first). Both caches run \`${args}\` (dnsmasq also \`--conf-file=/dev/null --no-hosts\`, started as root and dropping to its own user) in front of one upstream dnsmasq answering a hosts file. "bare Node" is bench/bare-udp.ts: a dgram socket sending pre-encoded replies for the same names, the ceiling for one Node process on this machine.

${report(results)}
`;
writeResults('dnscache', when, { node: process.version, dnsmasq: dnsmasqVersion, cpus: cpus().length, load, rounds: ROUNDS, seconds: SECONDS, names: NAMES, ...results }, md);
