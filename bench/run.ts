// npm run bench: kube-dns vs dnsmasq (a hosts file with the same names) and vs a bare Node UDP
// socket answering pre-encoded replies (the ceiling for any Node server here), under dnsperf, side
// by side, alternated over several rounds, at 2,000 and 50,000 services; latency percentiles at a
// fixed offered load; then RSS with 10,000 services and 50,000 endpoints.
// Writes bench/results/kubedns-<date>.{json,md}. Ratios matter: the machine is shared.

import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { makeCluster } from './fixtures.ts';
import { dnsperf, dnsperfLatency } from './dnsperf.ts';
import type { LatencyResult, PerfResult } from './dnsperf.ts';
import { rssMiB, startBareUdp, startDnsmasq, startKubeDns } from './servers.ts';
import { inTempDir, writeResults } from './report.ts';
import type { Running } from './servers.ts';
import { freePort } from '../test/helpers/ports.ts';
import { median } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
/** Offered load for the latency runs: well under every server's ceiling. */
const LATENCY_RATE = Number(process.env.BENCH_LATENCY_RATE ?? 20_000);
const SERVERS = ['kube-dns', 'dnsmasq', 'bare-node'] as const;
type ServerName = (typeof SERVERS)[number];


interface QpsCase {
  services: number;
  runs: Record<ServerName, PerfResult[]>;
  latency: Record<ServerName, LatencyResult>;
  rssMiB: Record<ServerName, number>;
  kubednsSyncMs: number;
}

const qpsCase = (services: number): Promise<QpsCase> => inTempDir(`kdt-bench-${services}-`, (dir) => qpsCaseIn(dir, services));

async function qpsCaseIn(dir: string, services: number): Promise<QpsCase> {
  const c = makeCluster(services);
  const queries = join(dir, 'queries');
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  writeFileSync(join(dir, 'hosts'), c.hosts);
  writeFileSync(queries, c.queries);
  const kd = await startKubeDns(dir, join(dir, 'cluster.json'));
  const servers: Record<ServerName, Running> = {
    'kube-dns': kd,
    dnsmasq: await startDnsmasq(dir, join(dir, 'hosts'), await freePort()),
    'bare-node': await startBareUdp(join(dir, 'hosts'), await freePort()),
  };
  const out: QpsCase = {
    services,
    runs: { 'kube-dns': [], dnsmasq: [], 'bare-node': [] },
    latency: {} as QpsCase['latency'],
    rssMiB: {} as QpsCase['rssMiB'],
    kubednsSyncMs: kd.syncMs,
  };
  try {
    // Warm every server (kube-dns pre-encodes answers on first ask), then alternate.
    for (const name of SERVERS) await dnsperf(servers[name].port, queries, 2);
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of SERVERS) out.runs[name].push(await dnsperf(servers[name].port, queries, SECONDS));
      console.log(`  ${services} services, round ${r + 1}: ${SERVERS.map((n) => `${n} ${out.runs[n].at(-1)!.qps.toFixed(0)}`).join(', ')} QPS`);
    }
    for (const name of SERVERS) out.latency[name] = await dnsperfLatency(servers[name].port, queries, 3, LATENCY_RATE);
    for (const name of SERVERS) out.rssMiB[name] = rssMiB(servers[name].pid);
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  return out;
}

const rssCase = (services: number, endpointsPerService: number) => inTempDir('kdt-bench-rss-', (dir) => rssCaseIn(dir, services, endpointsPerService));

async function rssCaseIn(dir: string, services: number, endpointsPerService: number) {
  const c = makeCluster(services, endpointsPerService);
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  writeFileSync(join(dir, 'queries'), c.queries);
  const kd = await startKubeDns(dir, join(dir, 'cluster.json'));
  try {
    const afterSync = rssMiB(kd.pid);
    const perf = await dnsperf(kd.port, join(dir, 'queries'), SECONDS);
    return { services, endpoints: c.endpoints, syncMs: kd.syncMs, rssAfterSyncMiB: afterSync, rssAfterLoadMiB: rssMiB(kd.pid), qps: perf.qps };
  } finally {
    await kd.stop();
  }
}

const ms = (x: number): string => `${x.toFixed(2)} ms`;

function report(cases: QpsCase[], rss: Awaited<ReturnType<typeof rssCase>>): string {
  const qps = (c: QpsCase, n: ServerName) => median(c.runs[n].map((p) => p.qps));
  const lines = [
    '| services | kube-dns QPS | dnsmasq QPS | bare Node QPS | kube-dns / dnsmasq | kube-dns / bare Node | RSS kube-dns / dnsmasq |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const c of cases) {
    const [k, d, b] = SERVERS.map((n) => qps(c, n));
    lines.push(`| ${c.services} | ${k.toFixed(0)} | ${d.toFixed(0)} | ${b.toFixed(0)} | **${(k / d).toFixed(2)}** | ${(k / b).toFixed(2)} | ${c.rssMiB['kube-dns'].toFixed(0)} / ${c.rssMiB.dnsmasq.toFixed(0)} MiB |`);
  }
  lines.push('', `Latency at ${LATENCY_RATE} queries/s offered (p50 / p90 / p99 / p99.9):`, '', '| services | kube-dns | dnsmasq | bare Node |', '|---|---|---|---|');
  for (const c of cases) {
    const cell = (n: ServerName) => [c.latency[n].p50Ms, c.latency[n].p90Ms, c.latency[n].p99Ms, c.latency[n].p999Ms].map(ms).join(' / ');
    lines.push(`| ${c.services} | ${cell('kube-dns')} | ${cell('dnsmasq')} | ${cell('bare-node')} |`);
  }
  const small = qps(cases[0], 'kube-dns');
  const large = qps(cases[cases.length - 1], 'kube-dns');
  lines.push('', `kube-dns QPS at ${cases[cases.length - 1].services} services / at ${cases[0].services}: **${(large / small).toFixed(2)}**`);
  lines.push('', `RSS with ${rss.services} services and ${rss.endpoints} endpoints: **${rss.rssAfterSyncMiB.toFixed(0)} MiB** after the first sync (${rss.syncMs} ms from process start), ${rss.rssAfterLoadMiB.toFixed(0)} MiB after a dnsperf run over 20,000 names (${rss.qps.toFixed(0)} QPS).`);
  return lines.join('\n');
}

console.log(`bench: ${ROUNDS} rounds of ${SECONDS}s per server, ${cpus().length} CPUs, node ${process.version}`);
const cases: QpsCase[] = [];
for (const n of [2000, 50_000]) cases.push(await qpsCase(n));
console.log('  RSS case: 10,000 headless services with 5 endpoints each');
const rss = await rssCase(10_000, 5);
const when = new Date().toISOString();
const md = `# kube-dns vs dnsmasq (${when})\n\nnode ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), dnsperf -T 1 -c 1 -q 200 -l ${SECONDS}, ${ROUNDS} alternated rounds (medians), A queries for service names in random order. "bare Node" is bench/bare-udp.ts: a dgram socket sending pre-encoded replies, the ceiling for a Node server on this machine.\n\n${report(cases, rss)}\n`;
writeResults('kubedns', when, { node: process.version, rounds: ROUNDS, seconds: SECONDS, cases, rss }, md);
