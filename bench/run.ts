// npm run bench: kube-dns vs dnsmasq (hosts file with the same names) under dnsperf, side by side,
// alternated over several rounds, at 2,000 and 50,000 services; then RSS with 10,000 services and
// 50,000 endpoints. Writes bench/results/<date>.{json,md}. Ratios matter: the machine is shared.

import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import type { PerfResult } from './dnsperf.ts';
import { repoRoot, rssMiB, startDnsmasq, startKubeDns } from './servers.ts';
import { freePort } from '../test/helpers/ports.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface QpsCase {
  services: number;
  kubedns: PerfResult[];
  dnsmasq: PerfResult[];
  kubednsRssMiB: number;
  dnsmasqRssMiB: number;
  kubednsSyncMs: number;
}

async function qpsCase(services: number): Promise<QpsCase> {
  const dir = mkdtempSync(join(tmpdir(), `kdt-bench-${services}-`));
  const c = makeCluster(services);
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  writeFileSync(join(dir, 'hosts'), c.hosts);
  writeFileSync(join(dir, 'queries'), c.queries);
  const kd = await startKubeDns(dir, join(dir, 'cluster.json'));
  const dm = await startDnsmasq(dir, join(dir, 'hosts'), await freePort());
  const out: QpsCase = { services, kubedns: [], dnsmasq: [], kubednsRssMiB: 0, dnsmasqRssMiB: 0, kubednsSyncMs: kd.syncMs };
  try {
    // Warm both (kube-dns pre-encodes answers on first ask), then alternate.
    await dnsperf(kd.port, join(dir, 'queries'), 2);
    await dnsperf(dm.port, join(dir, 'queries'), 2);
    for (let r = 0; r < ROUNDS; r++) {
      out.kubedns.push(await dnsperf(kd.port, join(dir, 'queries'), SECONDS));
      out.dnsmasq.push(await dnsperf(dm.port, join(dir, 'queries'), SECONDS));
      console.log(`  ${services} services, round ${r + 1}: kube-dns ${out.kubedns.at(-1)!.qps.toFixed(0)} QPS, dnsmasq ${out.dnsmasq.at(-1)!.qps.toFixed(0)} QPS`);
    }
    out.kubednsRssMiB = rssMiB(kd.pid);
    out.dnsmasqRssMiB = rssMiB(dm.pid);
  } finally {
    await kd.stop();
    await dm.stop();
  }
  return out;
}

async function rssCase(services: number, endpointsPerService: number) {
  const dir = mkdtempSync(join(tmpdir(), `kdt-bench-rss-`));
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

function table(cases: QpsCase[], rss: Awaited<ReturnType<typeof rssCase>>): string {
  const lines = [
    `| services | kube-dns QPS (median) | dnsmasq QPS (median) | ratio | kube-dns avg latency | dnsmasq avg latency | kube-dns RSS | dnsmasq RSS |`,
    `|---|---|---|---|---|---|---|---|`,
  ];
  for (const c of cases) {
    const k = median(c.kubedns.map((p) => p.qps));
    const d = median(c.dnsmasq.map((p) => p.qps));
    lines.push(
      `| ${c.services} | ${k.toFixed(0)} | ${d.toFixed(0)} | ${(k / d).toFixed(2)} | ${median(c.kubedns.map((p) => p.avgLatencyMs)).toFixed(2)} ms | ${median(c.dnsmasq.map((p) => p.avgLatencyMs)).toFixed(2)} ms | ${c.kubednsRssMiB.toFixed(0)} MiB | ${c.dnsmasqRssMiB.toFixed(0)} MiB |`,
    );
  }
  const small = median(cases[0].kubedns.map((p) => p.qps));
  const large = median(cases[cases.length - 1].kubedns.map((p) => p.qps));
  lines.push('', `kube-dns QPS at ${cases[cases.length - 1].services} services / at ${cases[0].services}: **${(large / small).toFixed(2)}**`);
  lines.push('', `RSS with ${rss.services} services and ${rss.endpoints} endpoints: **${rss.rssAfterSyncMiB.toFixed(0)} MiB** after sync, ${rss.rssAfterLoadMiB.toFixed(0)} MiB after a dnsperf run (${rss.qps.toFixed(0)} QPS); first sync took ${rss.syncMs} ms from process start.`);
  return lines.join('\n');
}

console.log(`bench: ${ROUNDS} rounds of ${SECONDS}s per server, ${cpus().length} CPUs, node ${process.version}`);
const cases: QpsCase[] = [];
for (const n of [2000, 50_000]) cases.push(await qpsCase(n));
console.log('  RSS case: 10,000 headless services with 5 endpoints each');
const rss = await rssCase(10_000, 5);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const resultsDir = join(repoRoot, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
const md = `# kube-dns vs dnsmasq (${new Date().toISOString()})\n\nnode ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), dnsperf -T 1 -c 1 -q 200 -l ${SECONDS}, ${ROUNDS} alternated rounds, A queries for service names in random order.\n\n${table(cases, rss)}\n`;
writeFileSync(join(resultsDir, `kubedns-${stamp}.json`), JSON.stringify({ when: new Date().toISOString(), node: process.version, rounds: ROUNDS, seconds: SECONDS, cases, rss }, null, 2) + '\n');
writeFileSync(join(resultsDir, `kubedns-${stamp}.md`), md);
console.log('\n' + md);
