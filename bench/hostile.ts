// npm run bench, the hostile part: how the pod holds up under attack and under operations, side by
// side with dnsmasq and CoreDNS where they apply (issue "Hold up under attack"):
//   1. A random-name flood ("water torture": `r<random>.default.svc.cluster.local`, never existing),
//      at a fixed rate. RSS before (warm), at its peak and after, and the QPS of names that exist
//      while it lasts against the same without it. Two roles: the cluster zone asked directly
//      (kube-dns; CoreDNS `file` + `cache 30`; dnsmasq with a hosts file and --local), and the
//      pod's cache in front of one kube-dns (dnscache; dnsmasq; CoreDNS `cache 30` + `forward`, as
//      NodeLocal DNSCache runs it), all three caches on dnsmasq's --cache-size=10000.
//   2. 1,500 stalled TCP connections (half a frame, or a 65,535-byte promise): is a new TCP client
//      answered within 2 s, and how fast.
//   3. Queries lost while dnsmasq-nanny applies config changes, SIGHUP path and restart path, with
//      dnscache and with the real dnsmasq (bench/dnscache-config.ts).
// Writes bench/results/hostile-<date>.{json,md}. CoreDNS rows appear when bench/build-coredns.sh
// has built it.
//
// Env: BENCH_FLOOD_NAMES (800000), BENCH_FLOOD_RATE (20000 queries/s), BENCH_SECONDS (5, the QPS
// runs), BENCH_STALLED (1500), BENCH_CONFIG (0 skips part 3), BENCH_PARTS (1,2,3: the parts to run).

import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { rssMiB, startDnsmasq, startKubeDns } from './servers.ts';
import { inTempDir, writeResults } from './report.ts';
import { startDnscache, startDnsmasqCache } from './dnscache-servers.ts';
import { corednsBin, startCoreDnsWith } from './api-servers.ts';
import { CONFIG_ENABLED, benchConfigChanges, configReport } from './dnscache-config.ts';
import type { ConfigResults } from './dnscache-config.ts';
import { freePort } from '../test/helpers/ports.ts';
import { stallFlood } from '../test/helpers/stall.ts';
import { median } from './stats.ts';

const run = promisify(execFile);
const FLOOD_NAMES = Number(process.env.BENCH_FLOOD_NAMES ?? 800_000);
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE ?? 20_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const STALLED = Number(process.env.BENCH_STALLED ?? 1500);
const SERVICES = 16;
const TCP_TRIES = 5;
const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3').split(','));

/** A server under test: where it answers and which process to weigh. */
interface Subject {
  name: string;
  role: 'zone' | 'cache';
  port: number;
  pid: number;
  stop(): Promise<void>;
}

interface FloodFigures {
  name: string;
  role: Subject['role'];
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssAfterMiB: number;
  qpsAlone: number;
  qpsDuringFlood: number;
  floodQps: number;
  floodLost: number;
}

interface TcpFigures {
  name: string;
  /** Stalled connections the server accepted. */
  accepted: number;
  answered: number;
  tries: number;
  medianMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function floodFile(path: string): void {
  const lines: string[] = [];
  for (let i = 0; i < FLOOD_NAMES; i++) lines.push(`r${i.toString(36)}${Math.random().toString(36).slice(2, 8)}.default.svc.cluster.local A`);
  writeFileSync(path, lines.join('\n') + '\n');
}

/** The zone file CoreDNS's `file` plugin serves: the same names as kube-dns's cluster, SOA as kube-dns's. */
function zoneFile(hosts: string): string {
  const records = hosts
    .trim()
    .split('\n')
    .map((line) => {
      const [ip, fqdn] = line.split(' ');
      return `${fqdn.replace(/\.cluster\.local$/, '')} 30 IN A ${ip}`;
    });
  return ['$ORIGIN cluster.local.', '@ 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30', '@ 30 IN NS ns.dns.cluster.local.', 'ns.dns 30 IN A 127.0.0.1', ...records].join('\n') + '\n';
}

async function floodOne(s: Subject, existing: string, flood: string): Promise<FloodFigures> {
  await dnsperf(s.port, existing, 2); // warm: every existing name asked, cached where it is cached
  await sleep(1000);
  const rssBeforeMiB = rssMiB(s.pid);
  const alone = await dnsperf(s.port, existing, SECONDS);
  let peak = rssBeforeMiB;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(s.pid))), 250);
  const seconds = Math.ceil(FLOOD_NAMES / FLOOD_RATE) + 30;
  const flooding = dnsperf(s.port, flood, seconds, ['-n', '1', '-Q', String(FLOOD_RATE), '-t', '2']);
  await sleep(5000);
  const during = await dnsperf(s.port, existing, SECONDS);
  const f = await flooding;
  clearInterval(sampler);
  await sleep(2000);
  const figures: FloodFigures = {
    name: s.name,
    role: s.role,
    rssBeforeMiB,
    rssPeakMiB: Math.max(peak, rssMiB(s.pid)),
    rssAfterMiB: rssMiB(s.pid),
    qpsAlone: alone.qps,
    qpsDuringFlood: during.qps,
    floodQps: f.qps,
    floodLost: f.lost,
  };
  console.log(`  flood ${s.name}: RSS ${rssBeforeMiB.toFixed(0)} -> peak ${figures.rssPeakMiB.toFixed(0)} -> ${figures.rssAfterMiB.toFixed(0)} MiB; existing names ${alone.qps.toFixed(0)} -> ${during.qps.toFixed(0)} QPS during the flood`);
  return figures;
}

async function tcpOne(s: Subject, name: string): Promise<TcpFigures> {
  const flood = await stallFlood(s.port, STALLED);
  const times: number[] = [];
  try {
    for (let i = 0; i < TCP_TRIES; i++) {
      const started = performance.now();
      const ok = await run('dig', [`@127.0.0.1`, '-p', String(s.port), '+tcp', '+time=2', '+tries=1', name, 'A'], { timeout: 10_000 }).then(
        (r) => /status: NOERROR/.test(r.stdout),
        () => false,
      );
      if (ok) times.push(performance.now() - started);
    }
  } finally {
    flood.close();
  }
  await sleep(1000);
  const figures = { name: s.name, accepted: flood.opened, answered: times.length, tries: TCP_TRIES, medianMs: median(times) };
  console.log(`  stalled TCP ${s.name}: ${figures.answered}/${TCP_TRIES} new clients answered, median ${figures.medianMs.toFixed(0)} ms`);
  return figures;
}

const asSubject = (role: Subject['role'], r: { name: string; port: number; pid: number; stop(): Promise<void> }): Subject => ({ role, ...r });

async function main(dir: string) {
  const c = makeCluster(SERVICES);
  const clusterFile = join(dir, 'cluster.json');
  const hostsFile = join(dir, 'hosts');
  const existing = join(dir, 'existing');
  const flood = join(dir, 'flood');
  writeFileSync(clusterFile, c.yaml);
  writeFileSync(hostsFile, c.hosts);
  writeFileSync(existing, c.queries);
  writeFileSync(join(dir, 'cluster.local.zone'), zoneFile(c.hosts));
  floodFile(flood);
  const coredns = corednsBin();
  const floods: FloodFigures[] = [];
  const tcp: TcpFigures[] = [];
  const someName = c.queries.split(' ')[0];

  // The zone asked directly.
  const zone: Subject[] = [];
  const backend = await startKubeDns(dir, clusterFile);
  try {
    zone.push(asSubject('zone', backend));
    if (coredns !== null) {
      const cd = await startCoreDnsWith(coredns, dir, 'coredns', `file ${join(dir, 'cluster.local.zone')} cluster.local\ncache 30`);
      zone.push({ name: 'coredns', role: 'zone', port: cd.port, pid: cd.daemon.pid, stop: () => cd.daemon.stop() });
    }
    const dm = await startDnsmasq(dir, hostsFile, await freePort(), ['--local=/cluster.local/']);
    zone.push(asSubject('zone', dm));
    if (PARTS.has('1')) for (const s of zone.slice(1)) floods.push(await floodOne(s, existing, flood));
    if (PARTS.has('2')) for (const s of zone.slice(1)) tcp.push(await tcpOne(s, someName));
    for (const s of zone.slice(1)) await s.stop();

    // The pod's cache in front of kube-dns (kube-dns itself is flooded last, fresh, asked directly).
    const caches: Subject[] = [];
    caches.push(asSubject('cache', await startDnscache(dir, await freePort(), backend.port)));
    caches.push(asSubject('cache', await startDnsmasqCache(dir, await freePort(), backend.port)));
    if (coredns !== null) {
      const cd = await startCoreDnsWith(coredns, dir, 'coredns-cache', `cache 30\nforward . 127.0.0.1:${backend.port}`);
      caches.push({ name: 'coredns (cache + forward)', role: 'cache', port: cd.port, pid: cd.daemon.pid, stop: () => cd.daemon.stop() });
    }
    if (PARTS.has('1')) for (const s of caches) floods.push(await floodOne(s, existing, flood));
    if (PARTS.has('2')) for (const s of caches) tcp.push(await tcpOne(s, someName));
    for (const s of caches) await s.stop();
  } finally {
    await backend.stop();
  }
  const fresh = await startKubeDns(dir, clusterFile);
  try {
    const s = asSubject('zone', fresh);
    if (PARTS.has('1')) floods.unshift(await floodOne(s, existing, flood));
    if (PARTS.has('2')) tcp.unshift(await tcpOne(s, someName));
  } finally {
    await fresh.stop();
  }
  rmSync(flood, { force: true });
  let config: ConfigResults | null = null;
  if (CONFIG_ENABLED && PARTS.has('3')) config = await benchConfigChanges(dir);
  return { floods, tcp, config, coredns };
}

function report(r: Awaited<ReturnType<typeof main>>): string {
  const mib = (x: number) => x.toFixed(0);
  const lines: string[] = [];
  if (r.floods.length > 0) lines.push(
    `## 1. ${FLOOD_NAMES.toLocaleString('en')} never-existing names at ${FLOOD_RATE.toLocaleString('en')} queries/s`,
    '',
    `RSS of the process asked (MiB): warm before the flood, its peak during it, and 2 s after. "Existing names" is dnsperf over the ${SERVICES} services' names for ${SECONDS} s, alone and then started 5 s into the flood. Goal for ours: at most 40 MiB over the warm baseline.`,
    '',
    '| role | server | RSS before / peak / after | growth | existing names QPS alone | during the flood | ratio | flood answered / lost |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const f of r.floods) {
    const growth = f.rssAfterMiB - f.rssBeforeMiB;
    lines.push(`| ${f.role === 'zone' ? 'cluster zone, asked directly' : 'cache in front of kube-dns'} | ${f.name} | ${mib(f.rssBeforeMiB)} / ${mib(f.rssPeakMiB)} / ${mib(f.rssAfterMiB)} | **${growth >= 0 ? '+' : ''}${mib(growth)}** (peak +${mib(f.rssPeakMiB - f.rssBeforeMiB)}) | ${f.qpsAlone.toFixed(0)} | ${f.qpsDuringFlood.toFixed(0)} | **${(f.qpsDuringFlood / f.qpsAlone).toFixed(2)}** | ${(FLOOD_NAMES - f.floodLost).toLocaleString('en')} / ${f.floodLost.toLocaleString('en')} |`);
  }
  if (r.tcp.length > 0) lines.push(
    '',
    `## 2. ${STALLED.toLocaleString('en')} stalled TCP connections`,
    '',
    `Half a query, or a length prefix promising 65,535 bytes, on each connection, left open; then ${TCP_TRIES} new clients ask over TCP one after another (\`dig +tcp +time=2 +tries=1\`). Goal: answered within 2 s.`,
    '',
    '| server | stalled connections accepted | new clients answered | median time |',
    '|---|---|---|---|',
  );
  for (const x of r.tcp) lines.push(`| ${x.name} | ${x.accepted} | **${x.answered} / ${x.tries}** | ${Number.isNaN(x.medianMs) ? '—' : `${x.medianMs.toFixed(0)} ms`} |`);
  if (r.config !== null) lines.push('', '## 3. Queries lost while the nanny applies config changes', '', configReport(r.config));
  return lines.join('\n');
}

const load = loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`bench:hostile: ${FLOOD_NAMES} flood names at ${FLOOD_RATE}/s, ${STALLED} stalled TCP connections, ${cpus().length} CPUs, node ${process.version}, load ${load}`);
const results = await inTempDir('kdt-bench-hostile-', main);
const when = new Date().toISOString();
const md = `# Hostile: floods, stalled clients, config changes (${when})

node ${process.version} (ours with their production flags), ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${load}; CoreDNS: ${results.coredns ?? 'not built (bench/build-coredns.sh)'}; dnsmasq from Debian (dnsmasq-base). kube-dns serves ${SERVICES} generated services from a cluster file; CoreDNS serves the same names from a zone file (\`file\` + \`cache 30\`), dnsmasq from a hosts file with \`--local=/cluster.local/\`. The caches run \`--cache-size=10000\` (dnscache and dnsmasq) and \`cache 30\` (CoreDNS, 9,984 entries per kind) in front of one kube-dns.

${report(results)}
`;
writeResults('hostile', when, { node: process.version, cpus: cpus().length, load, floodNames: FLOOD_NAMES, floodRate: FLOOD_RATE, stalled: STALLED, ...results }, md);
