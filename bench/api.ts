// npm run bench:api: kube-dns against a real kube-apiserver (the e2e harness's etcd + kube-apiserver on
// loopback), side by side with CoreDNS's kubernetes plugin when bench/build-coredns.sh has built it.
//  1. Initial sync: 10,000 headless Services with one EndpointSlice of 5 endpoints each (50,000 endpoints) are
//     created through the API; then each server starts and we time spawn -> ready, and read RSS after sync.
//  2. QPS: dnsperf, A queries for the service names, alternated rounds, the two servers side by side.
//  3. Watch-to-answer: 1,000 Services created one after another (IPv6 ClusterIPs: the harness's IPv4 range is
//     a /24); after each POST returns, both servers are asked AAAA until the name answers.
// Writes bench/results/api-<date>.{json,md}. Exits 0 without running when the API server binaries are missing.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { binariesAvailable, startBenchCluster } from './api-cluster.ts';
import type { KubeObject } from './api-cluster.ts';
import { Prober } from './api-probe.ts';
import { corednsBin, startCoreDns, startKubeDnsApi } from './api-servers.ts';
import type { ApiDnsServer } from './api-servers.ts';
import { dnsperf } from './dnsperf.ts';
import type { PerfResult } from './dnsperf.ts';
import { makeCluster } from './fixtures.ts';
import { rssMiB } from './servers.ts';
import { writeResults } from './report.ts';
import { latencySummary, median } from './stats.ts';
import type { LatencySummary } from './stats.ts';

const SERVICES = Number(process.env.BENCH_API_SERVICES ?? 10_000);
const ENDPOINTS_PER_SERVICE = 5;
const CHANGES = Number(process.env.BENCH_API_CHANGES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
/** kube-dns --workers (issue 20: a change reaches every thread within the one-thread bound). */
const WORKERS = Number(process.env.BENCH_API_WORKERS ?? 1);
const CONCURRENCY = 8;
const GOALS = { watchP99Ms: 100, readyMs: 5000, rssMiB: 150 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ServerFigures {
  readyMs: number;
  rssAfterSyncMiB: number;
  rssAfterLoadMiB?: number;
  qps: PerfResult[];
  watch?: LatencySummary;
}

const available = binariesAvailable();
if (!available.ok) {
  console.log(`bench:api skipped: ${available.why}`);
  process.exit(0);
}
const coredns = corednsBin();
console.log(`bench:api: ${SERVICES} services x ${ENDPOINTS_PER_SERVICE} endpoints, ${CHANGES} watch changes, ${ROUNDS} rounds of ${SECONDS}s, ${cpus().length} CPUs, node ${process.version}, CoreDNS: ${coredns ?? 'not built (bash bench/build-coredns.sh)'}`);

const work = mkdtempSync(join(tmpdir(), 'kdt-bench-api-'));
const fixture = makeCluster(SERVICES, ENDPOINTS_PER_SERVICE);
writeFileSync(join(work, 'queries'), fixture.queries);
const objects = (JSON.parse(fixture.yaml) as { items: KubeObject[] }).items;
const namespaces = [...new Set(objects.map((o) => o.metadata.namespace!)), 'bench-watch'];

const bc = await startBenchCluster();
const running: ApiDnsServer[] = [];
const figures: Record<string, ServerFigures> = {};
let createMs = 0;
try {
  await bc.createAll(namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  const t0 = performance.now();
  await bc.createAll(objects, CONCURRENCY, (n) => console.log(`  created ${n}/${objects.length} objects`));
  createMs = performance.now() - t0;
  console.log(`  ${objects.length} objects created through the API in ${(createMs / 1000).toFixed(1)} s`);

  // Initial sync, one server at a time so neither competes with the other's list.
  const kd = await startKubeDnsApi(work, bc.cluster.kubeconfig(bc.cluster.kubeDnsToken), { args: [`--workers=${WORKERS}`] });
  running.push(kd);
  await sleep(2000);
  figures['kube-dns'] = { readyMs: kd.readyMs, rssAfterSyncMiB: rssMiB(kd.daemon.pid), qps: [] };
  console.log(`  kube-dns ready in ${kd.readyMs.toFixed(0)} ms, RSS ${figures['kube-dns'].rssAfterSyncMiB.toFixed(0)} MiB`);
  if (coredns) {
    const cd = await startCoreDns(coredns, work, bc.cluster.kubeconfig(bc.cluster.adminToken));
    running.push(cd);
    await sleep(2000);
    figures.coredns = { readyMs: cd.readyMs, rssAfterSyncMiB: rssMiB(cd.daemon.pid), qps: [] };
    console.log(`  CoreDNS ready in ${cd.readyMs.toFixed(0)} ms, RSS ${figures.coredns.rssAfterSyncMiB.toFixed(0)} MiB`);
  }

  // QPS, alternated.
  for (const s of running) await dnsperf(s.port, join(work, 'queries'), 2);
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of running) figures[s.name].qps.push(await dnsperf(s.port, join(work, 'queries'), SECONDS));
    console.log(`  round ${r + 1}: ${running.map((s) => `${s.name} ${figures[s.name].qps.at(-1)!.qps.toFixed(0)}`).join(', ')} QPS`);
  }
  for (const s of running) figures[s.name].rssAfterLoadMiB = rssMiB(s.daemon.pid);

  // Watch-to-answer.
  // With threads, kube-dns is probed from several sockets (the kernel spreads them over its threads)
  // and a change counts as answered when every one of them has it.
  const probers = running.map((s) => Array.from({ length: s.name === 'kube-dns' && WORKERS > 1 ? 4 * WORKERS : 1 }, () => new Prober(s.port)));
  const lat: number[][] = running.map(() => []);
  try {
    for (let i = 0; i < CHANGES; i++) {
      const name = `watch-${i}`;
      await bc.create({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'bench-watch' }, spec: { ipFamilies: ['IPv6'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
      const returned = performance.now();
      const got = await Promise.all(probers.map(async (ps) => Math.max(...(await Promise.all(ps.map((p) => p.answeredAfter(`${name}.bench-watch.svc.cluster.local`, 'AAAA', returned)))))));
      got.forEach((ms, k) => lat[k].push(ms));
      if ((i + 1) % 250 === 0) console.log(`  watch: ${i + 1}/${CHANGES} changes`);
    }
  } finally {
    for (const p of probers.flat()) p.close();
  }
  running.forEach((s, k) => {
    const xs = lat[k];
    figures[s.name].watch = latencySummary(xs);
  });
} finally {
  for (const s of running) await s.daemon.stop();
  await bc.close();
}

// Report.
const kdF = figures['kube-dns'];
const cdF = figures.coredns;
const qps = (f?: ServerFigures) => (f ? median(f.qps.map((p) => p.qps)) : NaN);
const num = (x: number | undefined, d = 0) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
const met = (ok: boolean) => (ok ? 'met' : '**not met**');
const goals = {
  watchP99: met(kdF.watch!.p99Ms < GOALS.watchP99Ms),
  ready: met(kdF.readyMs < GOALS.readyMs),
  rss: met(kdF.rssAfterSyncMiB < GOALS.rssMiB),
  rssVsCoreDns: cdF ? met(kdF.rssAfterSyncMiB < cdF.rssAfterSyncMiB) : 'CoreDNS not built',
  qpsVsCoreDns: cdF ? met(qps(kdF) > qps(cdF)) : 'CoreDNS not built',
};
const row = (label: string, k: string, c: string, goal: string) => `| ${label} | ${k} | ${c} | ${goal} |`;
const watchCell = (f?: ServerFigures) => (f?.watch ? `${num(f.watch.p50Ms, 1)} / ${num(f.watch.p99Ms, 1)} / ${num(f.watch.maxMs, 1)} ms${f.watch.timeouts ? ` (${f.watch.timeouts} timeouts)` : ''}` : '-');
const table = [
  '| | kube-dns | CoreDNS | goal (kube-dns) |',
  '|---|---|---|---|',
  row(`watch-to-answer p50 / p99 / max, ${CHANGES} Service creates`, watchCell(kdF), watchCell(cdF), `p99 < ${GOALS.watchP99Ms} ms: ${goals.watchP99}`),
  row(`time to ready (spawn -> readiness 200), ${SERVICES} services / ${fixture.endpoints} endpoints`, `${num(kdF.readyMs)} ms`, cdF ? `${num(cdF.readyMs)} ms` : '-', `< ${GOALS.readyMs} ms: ${goals.ready}`),
  row('RSS after sync', `${num(kdF.rssAfterSyncMiB)} MiB`, cdF ? `${num(cdF.rssAfterSyncMiB)} MiB` : '-', `< ${GOALS.rssMiB} MiB: ${goals.rss}; below CoreDNS: ${goals.rssVsCoreDns}`),
  row('RSS after the dnsperf rounds', `${num(kdF.rssAfterLoadMiB)} MiB`, cdF ? `${num(cdF.rssAfterLoadMiB)} MiB` : '-', ''),
  row(`QPS (median of ${ROUNDS} alternated rounds)`, num(qps(kdF)), num(qps(cdF)), `above CoreDNS: ${goals.qpsVsCoreDns}`),
  row('QPS per round', kdF.qps.map((p) => p.qps.toFixed(0)).join(', '), cdF ? cdF.qps.map((p) => p.qps.toFixed(0)).join(', ') : '-', ''),
].join('\n');
const when = new Date().toISOString();
const md = `# kube-dns vs CoreDNS against a real kube-apiserver (${when})

node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}); kube-apiserver v1.36.3 + etcd from test/e2e/harness on loopback; CoreDNS ${coredns ? coredns.replace(/.*coredns-(v[\d.]+).*/, '$1') : 'not built'} (Corefile: bind, ready, kubernetes cluster.local with a kubeconfig; no cache). kube-dns is dist/ with its production Node flags, --workers=${WORKERS} (BENCH_API_WORKERS) and the kube-dns ServiceAccount token; CoreDNS uses the admin token.
${objects.length} objects (${SERVICES} headless Services, one EndpointSlice of ${ENDPOINTS_PER_SERVICE} ready endpoints each) created through the API ${CONCURRENCY} at a time in ${(createMs / 1000).toFixed(1)} s before either server started. dnsperf -T 1 -c 1 -q 200 -l ${SECONDS}, A queries of ${Math.min(SERVICES, 20_000)} service names in random order (5 A records each). Watch-to-answer: time from the Service POST returning to the first UDP AAAA answer, both servers probed at once, polling every ~1 ms.

${table}
`;
writeResults('api', when, { node: process.version, cpus: cpus().length, coredns, services: SERVICES, endpoints: fixture.endpoints, changes: CHANGES, rounds: ROUNDS, seconds: SECONDS, workers: WORKERS, createMs, goals: GOALS, goalsMet: goals, figures }, md);
