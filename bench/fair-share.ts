// npm run bench:fair (issue 26): one asker floods, the others must not notice. Per server, on the
// same machine in one run: 8 well-behaved askers (127.0.0.11-18, dnsperf -a) each ask at a fixed rate
// names that exist (hits once asked) and outside names asked for the first time (misses), first
// alone, then while one asker (127.0.0.66) floods names that never exist as fast as it can (dnsperf
// -Q BENCH_FAIR_FLOOD, over UDP, then over 10 TCP connections). The server under test is pinned to
// CPU 0: its CPU is what is scarce. On 2 CPUs every load generator and the backends share CPU 1; on 8
// or more they get CPUs of their own (backends 1, flooder 2-3, askers 4 on), so the askers' latency is
// the server's doing, not that of a load generator starved by the flood.
// Reported: the well-behaved askers' answered fraction, QPS kept and p99 against their run without
// the flood (the median of BENCH_FAIR_ROUNDS alternated rounds), the flooder's answered QPS, the
// server's CPU and peak RSS. Goal for ours (kube-dns; dnscache and
// node-cache in front of kube-dns): QPS kept >= 0.9, nothing lost, p99 <= 2x, in every role.
// Writes bench/results/<BENCH_FAIR_NAME, fair-share>-<date>.{json,md}.
//
// Env: BENCH_FAIR_RATE (250 queries/s per asker), BENCH_FAIR_FLOOD (50000), BENCH_FAIR_ROUNDS (3), BENCH_FAIR_FLOOD_THREADS
// (dnsperf -T of the UDP flood, 1), BENCH_SECONDS (6), BENCH_FAIR_SYSTEMS (a comma list of names, or
// name:role, to run; all unsaid), BENCH_FAIR_NAME (fair-share-16core on a bigger machine),
// BENCH_FAIR_WORKERS (kube-dns's and dnscache's --workers, 1; with N the server gets CPUs 0..N-1 and
// the rest move up by as many).

import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { dnsperfTimes, quantile } from './dnsperf.ts';
import { cpuTimeMs, nodeCacheArgv, productionNodeFlags, repoRoot, rssMiB, startDnsmasq, startKubeDns, stopper, waitForLine } from './servers.ts';
import { median } from './stats.ts';
import type { Running } from './servers.ts';
import { cacheArgs, startDnscacheWith, startDnsmasqCache } from './dnscache-servers.ts';
import { corednsBin, startCoreDnsWith } from './api-servers.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { captureWire, wireCanCapture } from './wire.ts';
import type { WireTime } from './wire.ts';
import { freePort } from '../test/helpers/ports.ts';

const run = promisify(execFile);
const RATE = Number(process.env.BENCH_FAIR_RATE ?? 250);
const FLOOD = Number(process.env.BENCH_FAIR_FLOOD ?? 50_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
/** Alone-then-flooded rounds per server and flood: single runs here swing by more than the goal. */
const ROUNDS = Number(process.env.BENCH_FAIR_ROUNDS ?? 3);
const ONLY = process.env.BENCH_FAIR_SYSTEMS?.split(',');
/** The floods run (BENCH_FAIR_FLOODS=tcp: that one only, for A/B runs by hand). */
const FLOODS = (process.env.BENCH_FAIR_FLOODS ?? 'udp,tcp').split(',') as ('udp' | 'tcp')[];
const ASKERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${11 + i}`);
const FLOODER = '127.0.0.66';
const FLOOD_THREADS = Number(process.env.BENCH_FAIR_FLOOD_THREADS ?? 1);
const CPUS = availableParallelism();
const WORKERS = Number(process.env.BENCH_FAIR_WORKERS ?? 1);
const SEPARATE = CPUS >= 8 + WORKERS - 1;
const SERVER_CPU = WORKERS > 1 ? `0-${WORKERS - 1}` : '0';
const BACKEND_CPU = String(WORKERS);
const FLOOD_CPU = SEPARATE ? `${WORKERS + 1}-${WORKERS + 2}` : BACKEND_CPU;
const ASKER_CPU = SEPARATE ? `${WORKERS + 3}-${CPUS - 1}` : BACKEND_CPU;
// The server's CPUs and the backends' one must exist: refused before anything starts.
if (WORKERS + 1 > CPUS) throw new Error(`BENCH_FAIR_WORKERS=${WORKERS} needs ${WORKERS + 1} CPUs (the server's and the backends'); this machine has ${CPUS}`);
/** --workers for ours that take it (kube-dns, dnscache): one thread per server CPU. */
const THREADS = [`--workers=${WORKERS}`];
/** The hits' latency on the wire too (bench/wire.ts), where this machine can capture. */
const WIRE = wireCanCapture();

type Role = 'zone' | 'cache' | 'node-cache';

interface Subject {
  name: string;
  role: Role;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

interface Phase {
  sent: number;
  answered: number;
  /** Over every asker's answered queries; and over the names that exist only (cache hits, once asked: the server's own doing, no backend on the way). */
  p99Ms: number;
  hitsP99Ms: number;
  /**
   * The hits' p99 from a capture on lo, query to answer (NaN without one): the askers' own scheduling
   * left out. Through a cache, an existing name's answer at the full TTL is not a hit but fetched
   * again from the backend (expired), counted in `wireRefetched` instead.
   */
  wireHitsP99Ms: number;
  wireRefetched: number;
  /** Every answer's p99 on the wire (NaN without a capture): misses and refetches too, the askers' scheduling left out. */
  wireP99Ms: number;
  /** The server's CPU over the phase (user + system, all its threads), % of one CPU. */
  cpuPct: number;
}

interface Figures {
  name: string;
  role: Role;
  flood: 'udp' | 'tcp';
  alone: Phase;
  /** The same flood sent to a port nothing reads, not to the server: what carrying it costs the machine. */
  elsewhere: Phase;
  flooded: Phase;
  /** The well-behaved askers' answered queries while flooded over alone. */
  qpsKept: number;
  p99Ratio: number;
  hitsP99Ratio: number;
  wireHitsP99Ratio: number;
  wireP99Ratio: number;
  floodAnsweredQps: number;
  rssPeakMiB: number;
  /** Each round's phases (the figures above are their medians). */
  rounds: Round[];
}

interface Round {
  alone: Phase;
  elsewhere: Phase;
  flooded: Phase;
  floodQps: number;
  wireHitsP99Ratio: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Moves every thread of `pid` to `cpu`. */
async function pin(pid: number, cpu: string): Promise<void> {
  await run('taskset', ['-a', '-cp', cpu, String(pid)]);
}

/**
 * A backend (the kube-dns behind the caches, the outside names' dnsmasq) on BACKEND_CPU. Where that is
 * the load generators' CPU too, every thread of it at nice -10: the flood's generator, busy on that
 * CPU, otherwise kept it waiting for a turn (the kube-dns behind dnscache answered the askers'
 * misses at p99 57 ms, the flood's at p50 19 ms, while dnscache's own thread idled), which is
 * this machine's doing, not the server's under test; on 8 CPUs or more the backends have one of
 * their own.
 */
async function pinBackend(pid: number): Promise<void> {
  await pin(pid, BACKEND_CPU);
  if (SEPARATE) return;
  for (const tid of readdirSync(`/proc/${pid}/task`)) await run('renice', ['-n', '-10', '-p', tid]);
}

/** One asker's names: an existing name, then a first-time outside name, in turn. */
function askerFile(dir: string, existing: string[], tag: string, count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(i % 2 === 0 ? `${existing[(i / 2) % existing.length]} A` : `${tag}-${i}.example.org A`);
  const path = join(dir, `${tag}.names`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** The 8 askers at RATE each, concurrently: what was sent and answered, and the p99s of their answers merged. */
async function askers(dir: string, s: Subject, existing: string[], tag: string): Promise<Phase> {
  const port = s.port;
  const files = ASKERS.map((_, i) => askerFile(dir, existing, `${tag}-${i}`, RATE * (SECONDS + 2)));
  const wireCapture = WIRE ? await captureWire(join(dir, `${tag}.pcap`), ASKERS, port, ASKER_CPU) : null;
  const cpu0 = cpuTimeMs(s.pid);
  const t0 = performance.now();
  const runs = await Promise.all(ASKERS.map((a, i) => dnsperfTimes(port, files[i], SECONDS, RATE, ['-a', a, '-t', '2'], ASKER_CPU)));
  const cpu1 = cpuTimeMs(s.pid);
  const cpuPct = (100 * (cpu1.user + cpu1.sys - cpu0.user - cpu0.sys)) / (performance.now() - t0);
  const wireTimes = wireCapture === null ? [] : (await wireCapture.stop()).times;
  const wire = wireHits(wireTimes, s.role);
  const times = runs.flatMap((r) => r.times);
  const hits = times.filter((t) => isCluster(t.name)).map((t) => t.ms);
  return { sent: runs.reduce((n, r) => n + r.sent, 0), answered: times.length, p99Ms: quantile(times.map((t) => t.ms), 0.99), hitsP99Ms: quantile(hits, 0.99), wireHitsP99Ms: quantile(wire.hits, 0.99), wireRefetched: wire.refetched, wireP99Ms: quantile(wireTimes.map((t) => t.ms), 0.99), cpuPct };
}

const isCluster = (name: string) => name.endsWith('.cluster.local');

/**
 * The existing names' answers on the wire that are hits: through a cache, those below the full TTL
 * (the largest seen). One at the full TTL was fetched just then, or is a hit in its entry's first
 * second: left out either way, so a refresh from a loaded backend does not read as the hit path's.
 */
function wireHits(times: WireTime[], role: Role): { hits: number[]; refetched: number } {
  const cluster = times.filter((t) => isCluster(t.name));
  if (role === 'zone') return { hits: cluster.map((t) => t.ms), refetched: 0 };
  const full = cluster.reduce((m, t) => Math.max(m, t.ttl), -1);
  const hits = cluster.filter((t) => t.ttl < full).map((t) => t.ms);
  return { hits, refetched: cluster.length - hits.length };
}

/** The flood: never-existing cluster names from FLOODER as fast as FLOOD allows; resolves with its answered QPS once stopped. */
function flood(port: number, file: string, mode: 'udp' | 'tcp'): { done: Promise<number>; stop(): void } {
  const args = ['-c', FLOOD_CPU, 'dnsperf', '-s', '127.0.0.1', '-p', String(port), '-a', FLOODER, '-d', file, '-l', String(SECONDS + 6), '-Q', String(FLOOD), '-t', '1', ...(mode === 'tcp' ? ['-m', 'tcp', '-c', '10', '-q', '1000'] : ['-q', '20000', '-T', String(FLOOD_THREADS), '-c', String(FLOOD_THREADS)])];
  const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<number>((resolve) => child.on('exit', () => resolve(Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1] ?? 0))));
  return { done, stop: () => child.kill('SIGINT') };
}

/**
 * One round: the askers alone; then with the flood sent elsewhere (`sink`, a port nothing reads: what
 * carrying the flood costs this machine, whatever the server does); then with the flood at the
 * server. Each flood starts 2 s before its phase, so the one at the server starts after a pause of
 * the askers long enough for the server to forget them (a second): the flooder arrives alone, as a
 * flood from a pod that starts while the others are quiet does. Run the other way round, it came
 * right after the askers, and a TCP flood was shared only by that timing (README). The flooder's
 * answered QPS.
 */
async function round(dir: string, s: Subject, sink: number, existing: string[], floodFile: string, mode: 'udp' | 'tcp', tag: string): Promise<Round> {
  const alone = await askers(dir, s, existing, `alone-${tag}`);
  const floodedAt = async (port: number, phase: string) => {
    const f = flood(port, floodFile, mode);
    await sleep(2000);
    const figures = await askers(dir, s, existing, `${phase}-${tag}`);
    f.stop();
    const qps = await f.done;
    await sleep(2000);
    return { figures, qps };
  };
  const elsewhere = (await floodedAt(sink, 'elsewhere')).figures;
  const { figures: flooded, qps: floodQps } = await floodedAt(s.port, 'flooded');
  return { alone, elsewhere, flooded, floodQps, wireHitsP99Ratio: flooded.wireHitsP99Ms / alone.wireHitsP99Ms };
}

/**
 * A port on 127.0.0.1 that takes a flood and reads none of it (UDP and TCP): a process of its own,
 * its thread blocked once bound. Its UDP queue (16 KiB) drops the rest, as a steered flow's does;
 * its TCP connections are never accepted, their senders stopped at the kernel's window.
 */
async function startSink(): Promise<{ port: number; stop(): void }> {
  const port = await freePort();
  const code = `const d = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 16384 });
d.bind(${port}, '127.0.0.1', () => require('node:net').createServer().listen(${port}, '127.0.0.1', () => { console.log('bound'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); }));`;
  const child = spawn('taskset', ['-c', ASKER_CPU, process.execPath, '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  await waitForLine(child, /bound/, 'the flood sink');
  return { port, stop: () => child.kill('SIGKILL') };
}

/** The phases of every round as one: queries summed, each figure the rounds' median. */
function mergedPhase(phases: Phase[]): Phase {
  const med = (f: (p: Phase) => number) => median(phases.map(f));
  return { sent: phases.reduce((n, p) => n + p.sent, 0), answered: phases.reduce((n, p) => n + p.answered, 0), p99Ms: med((p) => p.p99Ms), hitsP99Ms: med((p) => p.hitsP99Ms), wireHitsP99Ms: med((p) => p.wireHitsP99Ms), wireRefetched: phases.reduce((n, p) => n + p.wireRefetched, 0), wireP99Ms: med((p) => p.wireP99Ms), cpuPct: med((p) => p.cpuPct) };
}

async function measure(dir: string, s: Subject, sink: number, existing: string[], floodFile: string, mode: 'udp' | 'tcp', n: number): Promise<Figures> {
  // A fresh process is still compiling its hot paths (on the wire, its hits' p99 read 3 ms after one
  // round, 0.3 after two): the first flood's baseline gets a second round.
  for (let w = 0; w < (mode === FLOODS[0] ? 2 : 1); w++) await askers(dir, s, existing, `warm-${n}-${mode}-${w}`);
  let peak = rssMiB(s.pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(s.pid))), 250);
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(dir, s, sink, existing, floodFile, mode, `${n}-${mode}-${r}`));
  clearInterval(sampler);
  const alone = mergedPhase(rounds.map((r) => r.alone));
  const elsewhere = mergedPhase(rounds.map((r) => r.elsewhere));
  const flooded = mergedPhase(rounds.map((r) => r.flooded));
  const floodQps = median(rounds.map((r) => r.floodQps));
  const figures: Figures = {
    name: s.name,
    role: s.role,
    flood: mode,
    alone,
    elsewhere,
    flooded,
    qpsKept: flooded.answered / alone.answered,
    p99Ratio: flooded.p99Ms / alone.p99Ms,
    hitsP99Ratio: flooded.hitsP99Ms / alone.hitsP99Ms,
    wireHitsP99Ratio: flooded.wireHitsP99Ms / alone.wireHitsP99Ms,
    wireP99Ratio: flooded.wireP99Ms / alone.wireP99Ms,
    floodAnsweredQps: floodQps,
    rssPeakMiB: peak,
    rounds,
  };
  const each = rounds.map((r) => r.wireHitsP99Ratio.toFixed(1)).join(', ');
  console.log(`  ${s.name} (${s.role}, ${mode} flood, ${ROUNDS} rounds): kept ${figures.qpsKept.toFixed(2)}x, lost ${flooded.sent - flooded.answered}/${flooded.sent}, p99 ${alone.p99Ms.toFixed(2)} -> ${flooded.p99Ms.toFixed(2)} ms (hits ${alone.hitsP99Ms.toFixed(2)} -> ${flooded.hitsP99Ms.toFixed(2)}, on the wire ${alone.wireHitsP99Ms.toFixed(2)} -> ${flooded.wireHitsP99Ms.toFixed(2)}, refetched ${alone.wireRefetched} -> ${flooded.wireRefetched}, every answer on the wire ${alone.wireP99Ms.toFixed(2)} -> ${flooded.wireP99Ms.toFixed(2)}, the flood elsewhere ${elsewhere.wireHitsP99Ms.toFixed(2)}, each round ${each}x); flooder answered ${floodQps.toFixed(0)}/s; CPU ${alone.cpuPct.toFixed(0)} -> ${flooded.cpuPct.toFixed(0)} %; RSS peak ${peak.toFixed(0)} MiB`);
  return figures;
}

/** Our node-cache (the real program, its setup off: no interface, no rules) on a Corefile of one block forwarding to `backend`. */
async function startNodeCache(dir: string, backend: number, extra: string[] = []): Promise<Running> {
  const port = await freePort();
  const corefile = `.:${port} {\n    bind 127.0.0.1\n    cache 30\n    forward . 127.0.0.1:${backend}\n}\n`;
  const [node, ...args] = nodeCacheArgv(repoRoot, dir, '127.0.0.1', corefile, [`-metrics-listen-address=127.0.0.1:${await freePort()}`, `-dns.port=${port}`, ...extra]);
  const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = stopper(child);
  try {
    await waitForLine(child, /DNS listening .*port=\d+/, 'node-cache');
    return { name: extra.length > 0 ? 'node-cache (fair share off)' : 'node-cache', port, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Whether BENCH_FAIR_SYSTEMS names this subject, by name or as name:role (dnsmasq:cache). */
const wanted = (s: Subject) => ONLY === undefined || ONLY.includes(s.name) || ONLY.includes(`${s.name}:${s.role}`);

async function main(dir: string) {
  const c = makeCluster(16);
  const clusterFile = join(dir, 'cluster.json');
  const hostsFile = join(dir, 'hosts');
  writeFileSync(clusterFile, c.yaml);
  writeFileSync(hostsFile, c.hosts);
  const existing = c.queries.trim().split('\n').map((l) => l.split(' ')[0]);
  const floodFile = join(dir, 'flood');
  writeFileSync(floodFile, Array.from({ length: 1_000_000 }, (_, i) => `r${i.toString(36)}.default.svc.cluster.local A`).join('\n') + '\n');
  // Outside names: any name of example.org answers, from a dnsmasq of their own (on the backends' CPU).
  const upPort = await freePort();
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'hosts'), '192.0.2.2 www.example.org\n');
  writeFileSync(join(dir, 'resolv.conf'), `nameserver 127.0.0.1\n`);
  const upstream = await startDnsmasq(outside, join(outside, 'hosts'), upPort, ['--address=/example.org/192.0.2.1']);
  try {
    return await againstBackends({ dir, c, clusterFile, hostsFile, floodFile, existing, upPort }, upstream);
  } finally {
    await upstream.stop();
  }
}

/** What main() wrote and started for every subject. */
interface Setup {
  dir: string;
  c: ReturnType<typeof makeCluster>;
  clusterFile: string;
  hostsFile: string;
  floodFile: string;
  existing: string[];
  /** The outside names' dnsmasq. */
  upPort: number;
}

/** Every subject measured, with the outside names' dnsmasq `upstream` running and a kube-dns behind the caches started here. */
async function againstBackends({ dir, c, clusterFile, hostsFile, floodFile, existing, upPort }: Setup, upstream: Running): Promise<Figures[]> {
  await pinBackend(upstream.pid);
  const coredns = corednsBin();
  const results: Figures[] = [];
  const subjects: (() => Promise<Subject>)[] = [];
  const backend = await startKubeDns(dir, clusterFile, [`--nameservers=127.0.0.1:${upPort}`]);
  const sink = await startSink();
  try {
    await pinBackend(backend.pid);
    // The zone asked directly.
    subjects.push(async () => ({ ...(await startKubeDns(dir, clusterFile, [`--nameservers=127.0.0.1:${upPort}`, ...THREADS])), role: 'zone' as const }));
    if (coredns !== null) {
      subjects.push(async () => {
        const zone = join(dir, 'cluster.local.zone');
        writeFileSync(zone, ['$ORIGIN cluster.local.', '@ 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30', '@ 30 IN NS ns.dns.cluster.local.', 'ns.dns 30 IN A 127.0.0.1', ...c.hosts.trim().split('\n').map((l) => `${l.split(' ')[1].replace(/\.cluster\.local$/, '')} 30 IN A ${l.split(' ')[0]}`)].join('\n') + '\n');
        const cd = await startCoreDnsWith(coredns, dir, 'coredns-zone', `file ${zone} cluster.local\ncache 30\nforward . 127.0.0.1:${upPort}`);
        return { name: 'coredns', role: 'zone', port: cd.port, pid: cd.daemon.pid, stop: () => cd.daemon.stop() };
      });
    }
    subjects.push(async () => ({ ...(await startDnsmasq(dir, hostsFile, await freePort(), ['--local=/cluster.local/', `--server=127.0.0.1#${upPort}`])), role: 'zone' as const }));
    // The pod's cache in front of kube-dns, as the manifest runs it: naming each asker to kube-dns.
    subjects.push(async () => {
      const port = await freePort();
      const own = mkdtempSync(join(dir, 'dnscache-'));
      return { ...(await startDnscacheWith([...cacheArgs(port, backend.port, join(own, 'pid')), '--add-subnet=32,128', ...THREADS], port)), role: 'cache' as const };
    });
    subjects.push(async () => ({ ...(await startDnsmasqCache(dir, await freePort(), backend.port)), role: 'cache' as const }));
    if (coredns !== null) {
      subjects.push(async () => {
        const cd = await startCoreDnsWith(coredns, dir, 'coredns-cache', `cache 30\nforward . 127.0.0.1:${backend.port}`);
        return { name: 'coredns (cache + forward)', role: 'cache', port: cd.port, pid: cd.daemon.pid, stop: () => cd.daemon.stop() };
      });
    }
    // The node's cache in front of kube-dns (CoreDNS's NodeLocal DNSCache is its cache + forward above).
    subjects.push(async () => ({ ...(await startNodeCache(dir, backend.port)), role: 'node-cache' as const }));
    // Ours again with fair shares off: what the flood does without them.
    const off = ' (fair share off)';
    subjects.push(async () => ({ ...(await startKubeDns(dir, clusterFile, [`--nameservers=127.0.0.1:${upPort}`, '--fair-share-busy=0'])), name: `kube-dns${off}`, role: 'zone' as const }));
    subjects.push(async () => {
      const port = await freePort();
      const own = mkdtempSync(join(dir, 'dnscache-off-'));
      return { ...(await startDnscacheWith([...cacheArgs(port, backend.port, join(own, 'pid')), '--add-subnet=32,128', '--fair-share-busy=0'], port)), name: `dnscache${off}`, role: 'cache' as const };
    });
    subjects.push(async () => ({ ...(await startNodeCache(dir, backend.port, ['-fair-share-busy=0'])), role: 'node-cache' as const }));
    let n = 0;
    for (const make of subjects) {
      const s = await make();
      try {
        if (!wanted(s)) continue;
        await pin(s.pid, SERVER_CPU);
        for (const mode of FLOODS) results.push(await measure(dir, s, sink.port, existing, floodFile, mode, n++));
      } finally {
        await s.stop();
      }
    }
  } finally {
    sink.stop();
    await backend.stop();
  }
  return results;
}

const when = new Date().toISOString();
// This process reads every asker's answers as they come: on the server's CPU it took 2 % of it in
// bursts (perf sched), and the server's thread waited behind it.
await pin(process.pid, ASKER_CPU);
const results = await inTempDir('kdt-bench-fair-', main);
const rows = results.map(
  (r) =>
    `| ${r.name} | ${r.role} | ${r.flood} | ${r.qpsKept.toFixed(2)} | ${r.flooded.sent - r.flooded.answered} / ${r.flooded.sent} | ${r.alone.p99Ms.toFixed(2)} → ${r.flooded.p99Ms.toFixed(2)} (${r.p99Ratio.toFixed(1)}×) | ${r.alone.hitsP99Ms.toFixed(2)} → ${r.flooded.hitsP99Ms.toFixed(2)} (${r.hitsP99Ratio.toFixed(1)}×) | ${r.alone.wireHitsP99Ms.toFixed(2)} → ${r.flooded.wireHitsP99Ms.toFixed(2)} (${r.wireHitsP99Ratio.toFixed(1)}×) | ${r.alone.wireRefetched} / ${r.flooded.wireRefetched} | ${r.alone.wireP99Ms.toFixed(2)} → ${r.flooded.wireP99Ms.toFixed(2)} (${r.wireP99Ratio.toFixed(1)}×) | ${r.elsewhere.wireHitsP99Ms.toFixed(2)} (${(r.elsewhere.wireHitsP99Ms / r.alone.wireHitsP99Ms).toFixed(1)}×) | ${r.rounds.map((x) => x.wireHitsP99Ratio.toFixed(1)).join(', ')} | ${r.alone.cpuPct.toFixed(0)} → ${r.flooded.cpuPct.toFixed(0)} | ${r.floodAnsweredQps.toFixed(0)} | ${r.rssPeakMiB.toFixed(0)} |`,
);
const md = `# One asker floods, eight must not notice (${when})

${commitOf(repoRoot)}. node ${process.version}, ${CPUS} CPUs (${cpus()[0]?.model.trim()}), load average at start ${loadavg()[0].toFixed(2)}. The server under test on CPU ${SERVER_CPU}; the 8 askers (dnsperf -a 127.0.0.11-18, ${RATE} queries/s each: an existing cluster name, then an outside name asked for the first time, in turn) on CPU ${ASKER_CPU}; the flooder (dnsperf -a ${FLOODER}, never-existing cluster names at up to ${FLOOD}/s, -t 1, ${FLOOD_THREADS} thread(s); over TCP: 10 connections) on CPU ${FLOOD_CPU}; the kube-dns behind the caches and the outside names' dnsmasq on CPU ${BACKEND_CPU}. ${ROUNDS} rounds of ${SECONDS} s alone, ${SECONDS} s with the flood sent elsewhere (to a port nothing reads: what carrying the flood costs this machine, whatever the server does) and ${SECONDS} s flooded per server and flood, each flood started 2 s before its phase (the one at the server after the askers paused 4 s: it arrives alone); each figure is the rounds' median (queries: their sum), and the hits on the wire's ratio is given for each round too. The server's CPU: user + system, all its threads, % of one CPU. Ours run with their defaults (--fair-share-busy 90)${WORKERS > 1 ? `, kube-dns and dnscache with --workers=${WORKERS}` : ''}. ${SEPARATE ? 'Load generators, backends and server on CPUs of their own.' : 'The backends share the load CPU, at nice -10 so the flood generator does not keep them waiting; the askers\' own scheduling on that CPU is in the p99 columns, not in those on the wire.'}${WIRE ? ' Hits on the wire: their p99 from a capture on lo (tcpdump, kernel timestamps), query to answer, the askers\' scheduling left out (bench/wire.ts); through a cache, an answer at the full TTL is not a hit (fetched again from the backend just then) and is left out (refetched: their count over the rounds).' : ' No capture on this machine (root and tcpdump needed): hits on the wire NaN.'}

| server | role | flood | well-behaved QPS kept | lost while flooded | p99 ms alone → flooded | p99 of hits only | hits on the wire | refetched alone / flooded | p99 on the wire, every answer | the same, the flood elsewhere | hits on the wire, each round | server CPU % | flooder answered/s | RSS peak MiB |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
writeResults(process.env.BENCH_FAIR_NAME ?? 'fair-share', when, { rate: RATE, flood: FLOOD, seconds: SECONDS, rounds: ROUNDS, results }, md);
console.log(md);
