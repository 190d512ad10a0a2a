// npm run bench:churn (also part of npm run bench): what endpoint churn costs the names that did not
// change (issue "one table of watched kinds", defect 5). Against a real kube-apiserver (the e2e
// harness), kube-dns serves SERVICES headless services (the unchanged names, asked by dnsperf) while
// CHURN other services have their EndpointSlice replaced, CHANGE_RATE replacements a second. The
// QPS of the unchanged names with the churn is set against the same without it, rounds alternated,
// beside CoreDNS's kubernetes plugin (no cache) when bench/build-coredns.sh has built it.
// Two placements: everything on every CPU, and the control plane on CPU 0 apart from the DNS servers
// and dnsperf (as kube-dns on a worker node); see Placement.
// BENCH_BASELINE=<a checkout with dist/ built> adds that build's kube-dns (e.g. the commit before
// a change) to the same run.
// Writes bench/results/churn-<date>.{json,md}. Exits 0 without running when the API server binaries
// are missing.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { binariesAvailable, startBenchCluster } from './api-cluster.ts';
import type { BenchCluster, KubeObject } from './api-cluster.ts';
import { corednsBin, startCoreDns, startKubeDnsApi } from './api-servers.ts';
import type { ApiDnsServer } from './api-servers.ts';
import { dnsperf } from './dnsperf.ts';
import { makeCluster } from './fixtures.ts';
import { cpuTimeMs } from './servers.ts';
import { writeResults } from './report.ts';
import { median } from './stats.ts';

const SERVICES = Number(process.env.BENCH_CHURN_SERVICES ?? 2000);
const CHURN = 50;
const CHANGE_RATE = Number(process.env.BENCH_CHURN_RATE ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const GOAL = 0.9;


/**
 * Where the processes run. `shared`: everything on every CPU, one machine. `split`: the control plane
 * (API server, etcd, and this process, which drives the churn) on CPU 0, the DNS servers and dnsperf
 * on the others, as in a cluster, where kube-dns runs on a worker node and the API server elsewhere.
 */
type Placement = 'shared' | 'split';

interface Row {
  name: string;
  placement: Placement;
  alone: number[];
  churn: number[];
  /** Replacements the API server accepted during this server's churn rounds. */
  changes: number;
  /** The server's user + system CPU per 1,000 answered queries, per round. */
  cpuAlone: number[];
  cpuChurn: number[];
  /** The machine's idle share during each run. */
  idleAlone: number[];
  idleChurn: number[];
}

/** Machine-wide CPU times, for the idle share of a run. */
function cpuTotals(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}

/** dnsperf against `s`; QPS, the server's CPU per 1,000 queries, the machine's idle share. */
async function measured(s: ApiDnsServer, queries: string, cpus?: string): Promise<{ qps: number; cpuPerK: number; idle: number }> {
  const cpu0 = cpuTimeMs(s.daemon.pid);
  const m0 = cpuTotals();
  const p = await dnsperf(s.port, queries, SECONDS, [], cpus);
  const cpu1 = cpuTimeMs(s.daemon.pid);
  const m1 = cpuTotals();
  const used = cpu1.user + cpu1.sys - cpu0.user - cpu0.sys;
  return { qps: p.qps, cpuPerK: (used / (p.qps * SECONDS)) * 1000, idle: (m1.idle - m0.idle) / (m1.total - m0.total) };
}

/** The EndpointSlice of churn service `i`, with one endpoint whose address moves on every call. */
function churnSlice(i: number, n: number): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `churn-${i}`, namespace: 'bench-churn', labels: { 'kubernetes.io/service-name': `churn-${i}`, 'endpointslice.kubernetes.io/managed-by': 'bench' } } as KubeObject['metadata'],
    addressType: 'IPv4',
    endpoints: [{ addresses: [`10.200.${(n >> 8) & 255}.${n & 255}`], conditions: { ready: true } }],
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  };
}

/** Replaces churn slices at CHANGE_RATE a second until stopped; resolves with how many were accepted. */
function churn(bc: BenchCluster): { stop(): Promise<number> } {
  let n = 0;
  let accepted = 0;
  const inflight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const p = bc.replace(churnSlice(n % CHURN, n)).then(() => void accepted++, (err: Error) => console.log(`  churn: ${err.message}`));
    n++;
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  }, 1000 / CHANGE_RATE);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inflight);
      return accepted;
    },
  };
}

async function fixture(bc: BenchCluster, work: string): Promise<string> {
  const f = makeCluster(SERVICES, 5);
  const queries = join(work, 'queries');
  writeFileSync(queries, f.queries);
  const objects = (JSON.parse(f.yaml) as { items: KubeObject[] }).items;
  const namespaces = [...new Set(objects.map((o) => o.metadata.namespace!)), 'bench-churn'];
  await bc.createAll(namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  const churning: KubeObject[] = [];
  for (let i = 0; i < CHURN; i++) {
    churning.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: `churn-${i}`, namespace: 'bench-churn' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
    churning.push(churnSlice(i, i));
  }
  await bc.createAll([...objects, ...churning], 8);
  return queries;
}

/** Every thread of `pids` onto `cpus` (a taskset list). */
function pin(pids: number[], cpus: string): void {
  for (const pid of pids) execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * Puts the processes where `placement` says; returns the CPUs dnsperf runs on (undefined: any). The
 * control plane is what names the cluster's directory on its command line, but for the DNS servers
 * (kube-dns names its kubeconfig there).
 */
function place(placement: Placement, bc: BenchCluster, servers: ApiDnsServer[]): string | undefined {
  const all = `0-${cpus().length - 1}`;
  const workers = placement === 'split' ? `1-${cpus().length - 1}` : all;
  const serverPids = servers.map((s) => s.daemon.pid);
  const named = execFileSync('pgrep', ['-f', bc.cluster.dir], { encoding: 'utf8' }).trim().split('\n').map(Number);
  pin([...named.filter((pid) => !serverPids.includes(pid)), process.pid], placement === 'split' ? '0' : all);
  pin(serverPids, workers);
  return placement === 'split' ? workers : undefined;
}

async function main(): Promise<{ rows: Row[]; coredns: string | null }> {
  const work = mkdtempSync(join(tmpdir(), 'kdt-bench-churn-'));
  const bc = await startBenchCluster();
  const running: ApiDnsServer[] = [];
  try {
    const queries = await fixture(bc, work);
    const kubeconfig = bc.cluster.kubeconfig(bc.cluster.kubeDnsToken);
    running.push(await startKubeDnsApi(work, kubeconfig));
    if (process.env.BENCH_BASELINE) running.push(await startKubeDnsApi(work, kubeconfig, { root: process.env.BENCH_BASELINE, name: 'kube-dns (baseline)' }));
    const coredns = corednsBin();
    if (coredns) running.push(await startCoreDns(coredns, work, bc.cluster.kubeconfig(bc.cluster.adminToken)));
    const placements: Placement[] = cpus().length > 1 ? ['shared', 'split'] : ['shared'];
    const rows: Row[] = placements.flatMap((placement) => running.map((s) => ({ name: s.name, placement, alone: [], churn: [], changes: 0, cpuAlone: [], cpuChurn: [], idleAlone: [], idleChurn: [] })));
    for (const s of running) await dnsperf(s.port, queries, 2);
    for (const [p, placement] of placements.entries()) {
      const dnsperfCpus = place(placement, bc, running);
      for (let r = 0; r < ROUNDS; r++) {
        for (const [j, s] of running.entries()) {
          const k = p * running.length + j;
          const alone = await measured(s, queries, dnsperfCpus);
          const c = churn(bc);
          const churned = await measured(s, queries, dnsperfCpus);
          rows[k].changes += await c.stop();
          rows[k].alone.push(alone.qps);
          rows[k].churn.push(churned.qps);
          rows[k].cpuAlone.push(alone.cpuPerK);
          rows[k].cpuChurn.push(churned.cpuPerK);
          rows[k].idleAlone.push(alone.idle);
          rows[k].idleChurn.push(churned.idle);
        }
        const these = rows.filter((x) => x.placement === placement);
        console.log(`  ${placement} round ${r + 1}: ${these.map((x) => `${x.name} ${x.alone.at(-1)!.toFixed(0)} alone, ${x.churn.at(-1)!.toFixed(0)} under churn`).join('; ')}`);
      }
    }
    return { rows, coredns };
  } finally {
    for (const s of running) await s.daemon.stop();
    await bc.close();
    rmSync(work, { recursive: true, force: true });
  }
}

const available = binariesAvailable();
if (!available.ok) {
  console.log(`bench:churn skipped: ${available.why}`);
  process.exit(0);
}
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`bench:churn: ${SERVICES} services asked, ${CHURN} churning at ${CHANGE_RATE} changes/s, ${ROUNDS} rounds of ${SECONDS}s, ${cpus().length} CPUs, node ${process.version}, load ${load}`);
const results = await main();
const when = new Date().toISOString();
const lines = [
  '| server | placement | QPS without churn | with churn | ratio | goal (kube-dns) | changes accepted | server CPU per 1,000 queries, without / with | machine idle, without / with |',
  '|---|---|---|---|---|---|---|---|---|',
  ...results.rows.map((r) => {
    const ratio = median(r.churn) / median(r.alone);
    const goal = r.name === 'kube-dns' ? `≥ ${GOAL}: ${ratio >= GOAL ? 'met' : '**not met**'}` : '';
    const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
    return `| ${r.name} | ${r.placement} | ${median(r.alone).toFixed(0)} | ${median(r.churn).toFixed(0)} | **${ratio.toFixed(2)}** | ${goal} | ${r.changes} | ${median(r.cpuAlone).toFixed(1)} / ${median(r.cpuChurn).toFixed(1)} ms | ${pct(median(r.idleAlone))} / ${pct(median(r.idleChurn))} |`;
  }),
];
const md = `# Endpoint churn: QPS of unchanged names (${when})

node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${load}; kube-apiserver v1.36.3 + etcd from test/e2e/harness on loopback; CoreDNS ${results.coredns ? results.coredns.replace(/.*coredns-(v[\d.]+).*/, '$1') : 'not built'} (kubernetes plugin, no cache). ${SERVICES} headless services with 5 ready endpoints each are asked (dnsperf -T 1 -c 1 -q 200 -l ${SECONDS}, A queries in random order), alone and while ${CHURN} other services have their EndpointSlice replaced through the API at ${CHANGE_RATE} a second (one endpoint address moving each time). Medians of ${ROUNDS} alternated rounds, in two placements: \`shared\`, every process on every CPU (the API server and etcd, handling the churn, compete with the DNS server for the same CPUs), and \`split\`, the API server, etcd and the churn driver on CPU 0 and the DNS servers with dnsperf on the others (taskset), as in a cluster where kube-dns runs on a worker node. The server's CPU per query says whether the churn made each answer dearer (cache misses, rebuilds); the machine's idle share says whether the API server and etcd, handling the churn on the same CPUs, left the server less to run on.

${lines.join('\n')}
`;
writeResults('churn', when, { node: process.version, cpus: cpus().length, load, services: SERVICES, churn: CHURN, rate: CHANGE_RATE, rounds: ROUNDS, seconds: SECONDS, ...results }, md);
