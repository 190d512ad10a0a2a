// npm run bench:scale-api (issue 27): kube-dns beside CoreDNS 1.15 against a real kube-apiserver + etcd
// holding a cluster shaped like Kubernetes' scalability envelope, at BENCH_SCALE_PODS pods (25,000;
// the issue's curve: 25k, 50k, 100k, 150k):
//  - 5,000 Nodes; the pods spread over them and 100 namespaces, each with the address a kubelet reports;
//  - 10,000 Services: one of 10,000 endpoints (headless, as clusterloader2's huge service, so every
//    endpoint has a name), 50 of 250, the rest 1-50 (fewer while the pods are too few for each to back
//    about one Service; every tenth headless), 500 ExternalNames;
//    EndpointSlices of at most 100 endpoints, as the EndpointSlice controller cuts them.
// Four servers, each with its pod watch on and off: kube-dns --autopath / --autopath=false, CoreDNS
// `kubernetes { pods verified }` + `autopath @kubernetes` / `kubernetes` alone. Measured:
//  1. start: spawn → ready, and → the first correct answer for the last Service created; the medians of
//     BENCH_SCALE_STARTS (3) starts of each server alone, alternated;
//  2. RSS steady (after 15 s idle), beside CoreDNS's sizing formula for the same objects;
//  3. RSS peak while the kube-apiserver restarts and every server lists again (sampled every 100 ms
//     until each answers a Service created after the restart, then 10 s more); and while the API server
//     stays up but the servers are cut off from it (test/e2e/harness/api-proxy.ts) until their watches expire by a
//     too-old resourceVersion (bench/watch-expiry.ts), then let back;
//  4. watch-to-answer: BENCH_SCALE_CHANGES (200) Services created one after another, each server asked
//     until the name answers; propagation: BENCH_SCALE_PROPAGATIONS (100) endpoints of the huge
//     Service turned ready one after another, until the endpoint's name answers (clusterloader2's
//     DNS propagation);
//  5. QPS on the Service names (dnsperf, BENCH_SECONDS each, alternated) and CPU per query.
// BENCH_SCALE_FLAGS (e.g. "--max-semi-space-size=2"): two kube-dns more, with these Node flags for their bin's.
// BENCH_SCALE_HOLD=1: create the cluster, print kube-dns's kubeconfig and the API server's address, and keep
// them until interrupted (to profile a start by hand); nothing is measured.
// Writes bench/results/scale-api-<pods>-<date>.{json,md}. Exits 0 without running when the API server
// binaries are missing.

import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { binariesAvailable, startBenchCluster } from './api-cluster.ts';
import type { BenchCluster, KubeObject } from './api-cluster.ts';
import { Prober } from './api-probe.ts';
import { corednsBin, startCoreDnsWith, startKubeDnsApi } from './api-servers.ts';
import type { ApiDnsServer } from './api-servers.ts';
import { dnsperf } from './dnsperf.ts';
import { inTempDir, writeResults } from './report.ts';
import { cpuPerQuery, rssMiB } from './servers.ts';
import { latencySummary, median } from './stats.ts';
import type { LatencySummary } from './stats.ts';
import { expireWatches } from './watch-expiry.ts';
import { ApiProxy } from '../test/e2e/harness/api-proxy.ts';

const PODS = Number(process.env.BENCH_SCALE_PODS ?? 25_000);
const NODES = 5_000;
const NAMESPACES = 100;
const SERVICES = 10_000;
const HUGE = 10_000;
const LARGE = 50;
const LARGE_ENDPOINTS = 250;
const EXTERNAL_NAMES = 500;
const SLICE_MAX = 100;
const CHANGES = Number(process.env.BENCH_SCALE_CHANGES ?? 200);
const PROPAGATIONS = Number(process.env.BENCH_SCALE_PROPAGATIONS ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const STARTS = Number(process.env.BENCH_SCALE_STARTS ?? 3);
const CONCURRENCY = 32;
const HOLD = process.env.BENCH_SCALE_HOLD === '1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const podIp = (i: number) => `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const nsOf = (i: number) => `bench-${i % NAMESPACES}`;
const HUGE_NS = nsOf(0);

interface Shape {
  nodes: KubeObject[];
  pods: KubeObject[];
  services: KubeObject[];
  slices: KubeObject[];
  /** The huge Service's slices, in order (slice k holds endpoints 100k...): its last endpoints start not ready. */
  huge: KubeObject[];
  endpoints: number;
  /** The ordinary Services' largest size. */
  spread: number;
  /** A query file of the ClusterIP Services' names. */
  queries: string;
}

/** The cluster's objects: pods spread over nodes and namespaces, Services whose slices hold them. */
function shape(): Shape {
  const nodes = Array.from({ length: NODES }, (_, i) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${i}` }, spec: {} }));
  const pods = Array.from({ length: PODS }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: nsOf(i) },
    spec: { nodeName: `node-${i % NODES}`, containers: [{ name: 'app', image: 'registry.example/app:1.0' }] },
  }));
  // The next pod of a namespace for an endpoint (pod i lives in namespace i % NAMESPACES).
  const cursor = new Array<number>(NAMESPACES).fill(0);
  const perNs = Math.floor(PODS / NAMESPACES);
  const nextPod = (ns: number) => ns + NAMESPACES * (cursor[ns]++ % perNs);
  const services: KubeObject[] = [];
  const slices: KubeObject[] = [];
  const huge: KubeObject[] = [];
  const queries: string[] = [];
  let endpoints = 0;
  // The rest's sizes 1..spread (at most 50), so that endpoints number about the pods (a pod backs about
  // one Service) once there are enough of them: 150,000 pods give 1-26.
  const rest = SERVICES - 1 - LARGE - EXTERNAL_NAMES;
  const spread = Math.min(50, Math.max(1, Math.floor((2 * (PODS - HUGE - LARGE * LARGE_ENDPOINTS)) / rest)));
  for (let s = 0; s < SERVICES; s++) {
    const ns = s % NAMESPACES;
    const name = s === 0 ? 'huge' : `svc-${s}`;
    const meta = { name, namespace: nsOf(ns) };
    if (s >= SERVICES - EXTERNAL_NAMES) {
      services.push({ apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { type: 'ExternalName', externalName: `ext-${s}.example.com` } });
      continue;
    }
    const count = s === 0 ? HUGE : s <= LARGE ? LARGE_ENDPOINTS : 1 + ((s * 7919) % spread);
    const headless = s === 0 || s % 10 === 0;
    const ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
    services.push({ apiVersion: 'v1', kind: 'Service', metadata: meta, spec: headless ? { clusterIP: 'None', ports } : { ipFamilies: ['IPv6'], ipFamilyPolicy: 'SingleStack', ports } });
    if (!headless) queries.push(`${name}.${nsOf(ns)}.svc.cluster.local AAAA`);
    for (let first = 0, k = 0; first < count; first += SLICE_MAX, k++) {
      const eps = Array.from({ length: Math.min(SLICE_MAX, count - first) }, (_, j) => {
        const n = first + j;
        const pod = nextPod(ns);
        // The huge Service's last PROPAGATIONS endpoints start not ready: the propagation part readies them.
        const ready = !(s === 0 && n >= HUGE - PROPAGATIONS);
        return { addresses: [podIp(pod)], conditions: { ready }, hostname: s === 0 ? `h-${n}` : undefined, nodeName: `node-${pod % NODES}`, targetRef: { kind: 'Pod', name: `pod-${pod}`, namespace: nsOf(ns) } };
      });
      endpoints += eps.length;
      const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-${k}`, namespace: nsOf(ns), labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', endpoints: eps, ports };
      slices.push(slice);
      if (s === 0) huge.push(slice);
    }
  }
  return { nodes, pods, services, slices, huge, endpoints, spread, queries: `${queries.join('\n')}\n` };
}

interface Relist {
  peakMiB: number;
  backMs: number;
  /** kube-dns only: lists after the first, and watches answered 410, during the phase; the kinds whose watches were. */
  relists?: number;
  expired?: number;
  expiredKinds?: string[];
}

interface Figures {
  /** The median of STARTS starts; readyRange their least and most. */
  readyMs: number;
  readyRange?: [number, number];
  firstAnswerMs: number;
  steadyMiB: number;
  relist?: Relist;
  /** The watches expired by a too-old resourceVersion while the API server stayed up. */
  expiry?: Relist;
  watch?: LatencySummary;
  propagation?: LatencySummary;
  qps?: number;
  cpuUsPerQuery?: number;
}

/** Milliseconds from `since` until `name` answers on `port` (NaN after `limitMs`), asked from a socket of its own. */
async function answeredAfter(port: number, name: string, type: 'A' | 'AAAA', since: number, limitMs: number): Promise<number> {
  const p = new Prober(port);
  try {
    return await p.answeredAfter(name, type, since, limitMs);
  } finally {
    p.close();
  }
}

/** Starts a server and times it to its first correct answer for `name` (the last Service created). */
async function started(start: () => Promise<ApiDnsServer>, name: string): Promise<{ server: ApiDnsServer; figures: Figures }> {
  const t0 = performance.now();
  const server = await start();
  const firstAnswerMs = await answeredAfter(server.port, name, 'AAAA', t0, 300_000);
  return { server, figures: { readyMs: server.readyMs, firstAnswerMs, steadyMiB: NaN } };
}

/** Creates each change with `make`, then asks every server until `name(i)` answers; per server, the times. */
async function changes(servers: ApiDnsServer[], n: number, type: 'A' | 'AAAA', make: (i: number) => Promise<void>, name: (i: number) => string): Promise<number[][]> {
  const probers = servers.map((s) => new Prober(s.port));
  const times: number[][] = servers.map(() => []);
  try {
    for (let i = 0; i < n; i++) {
      await make(i);
      const since = performance.now();
      const got = await Promise.all(probers.map((p) => p.answeredAfter(name(i), type, since, 10_000)));
      got.forEach((ms, k) => times[k].push(ms));
    }
  } finally {
    for (const p of probers) p.close();
  }
  return times;
}

/** RSS of every server sampled every 100 ms while `phase` runs and 10 s after: the peaks, and what `phase` gave. */
async function peaksWhile<T>(servers: ApiDnsServer[], phase: () => Promise<T>): Promise<{ peaks: number[]; result: T }> {
  const peaks = servers.map((s) => rssMiB(s.daemon.pid!));
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      servers.forEach((s, k) => (peaks[k] = Math.max(peaks[k], rssMiB(s.daemon.pid!))));
      await sleep(100);
    }
  })();
  try {
    const result = await phase();
    await sleep(10_000);
    return { peaks, result };
  } finally {
    sampling = false;
    await sampler;
  }
}

/** Each server's ms from `since` until the Service `name` of HUGE_NS answers. */
const backAfter = (servers: ApiDnsServer[], name: string, since: number): Promise<number[]> =>
  Promise.all(servers.map((s) => answeredAfter(s.port, `${name}.${HUGE_NS}.svc.cluster.local`, 'AAAA', since, 300_000)));

/** The API server restarted while every server runs: RSS peaks, and ms until each answers a Service created after. */
async function relist(api: BenchCluster, servers: ApiDnsServer[]): Promise<Relist[]> {
  const { peaks, result: back } = await peaksWhile(servers, async () => {
    const t0 = performance.now();
    await api.cluster.restartApiServer();
    // The client's kept-alive connections died with the old API server: its first requests may fail.
    for (let tries = 0; ; tries++) {
      try {
        await api.create(service('after-restart', HUGE_NS));
        break;
      } catch (err) {
        if (tries === 20) throw err;
        await sleep(500);
      }
    }
    return backAfter(servers, 'after-restart', t0);
  });
  return servers.map((_, k) => ({ peakMiB: peaks[k], backMs: back[k] }));
}

/**
 * Every server cut off from the API server (`proxy`: connections reset, new ones refused) until the watches of each kind of `written` have
 * expired, then let back: RSS peaks, ms from the restore until each answers a Service created during
 * the cut, and kube-dns's relists and 410s by its metrics.
 */
async function expiry(api: BenchCluster, proxy: ApiProxy, servers: ApiDnsServer[], written: KubeObject[]): Promise<{ figures: Relist[]; cutMs: number; writes: number }> {
  const before = await Promise.all(servers.map(sourceRestarts));
  const { peaks, result } = await peaksWhile(servers, async () => {
    proxy.block(true);
    proxy.cut();
    await api.create(service('after-expiry', HUGE_NS));
    const cut = await expireWatches(api, written, 300_000);
    const t0 = performance.now();
    proxy.block(false);
    return { ...cut, back: await backAfter(servers, 'after-expiry', t0) };
  });
  const after = await Promise.all(servers.map(sourceRestarts));
  const figures = servers.map((_, k) => ({ peakMiB: peaks[k], backMs: result.back[k], ...restartsBetween(before[k], after[k]) }));
  return { figures, cutMs: result.ms, writes: result.writes };
}

type Restarts = Record<string, { relists: number; expired: number }>;

/** kube-dns's lists after the first and watches answered 410, by kind (undefined for CoreDNS). */
async function sourceRestarts(s: ApiDnsServer): Promise<Restarts | undefined> {
  if (s.httpPort === undefined) return undefined;
  const text = await (await fetch(`http://127.0.0.1:${s.httpPort}/metrics`)).text();
  const byKind: Restarts = {};
  for (const line of text.split('\n')) {
    const m = /^kubedns_source_(relists_total|watch_restarts_total)\{(.*)\} (\S+)$/.exec(line);
    if (m === null) continue;
    const counts = (byKind[/kind="([^"]*)"/.exec(m[2])?.[1] ?? ''] ??= { relists: 0, expired: 0 });
    if (m[1] === 'relists_total') counts.relists += Number(m[3]);
    else if (m[2].includes('reason="expired"')) counts.expired += Number(m[3]);
  }
  return byKind;
}

/** What kube-dns counted between two readings: lists and 410s, and the kinds that had a 410. */
function restartsBetween(before: Restarts | undefined, after: Restarts | undefined): Pick<Relist, 'relists' | 'expired' | 'expiredKinds'> {
  if (before === undefined || after === undefined) return {};
  const kinds = Object.keys(after);
  const grew = (kind: string, what: 'relists' | 'expired') => after[kind][what] - (before[kind]?.[what] ?? 0);
  const total = (what: 'relists' | 'expired') => kinds.reduce((n, kind) => n + grew(kind, what), 0);
  return { relists: total('relists'), expired: total('expired'), expiredKinds: kinds.filter((kind) => grew(kind, 'expired') > 0) };
}

function service(name: string, namespace: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ipFamilies: ['IPv6'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } };
}

async function holdUntilInterrupted(api: BenchCluster): Promise<void> {
  console.log(`  held: kube-dns's kubeconfig ${api.cluster.kubeconfig(api.cluster.kubeDnsToken, api.cluster.url)}, admin's ${api.cluster.kubeconfig(api.cluster.adminToken, api.cluster.url)}; ^C ends it`);
  await new Promise((resolve) => process.once('SIGINT', resolve));
}

/** QPS and CPU per query of each server over the ClusterIP names, alternated. */
async function load(servers: ApiDnsServer[], queries: string): Promise<{ qps: number; cpuUs: number }[]> {
  const out = servers.map(() => ({ qps: 0, cpuUs: 0 }));
  for (const [k, s] of servers.entries()) {
    const { us, runs } = await cpuPerQuery(s.daemon.pid!, async () => [await dnsperf(s.port, queries, SECONDS)]);
    out[k] = { qps: runs[0].qps, cpuUs: us };
  }
  return out;
}

const available = binariesAvailable();
if (!available.ok) {
  console.log(`bench:scale-api skipped: ${available.why}`);
  process.exit(0);
}
const coredns = corednsBin();
const cluster = shape();
console.log(`bench:scale-api: ${PODS} pods on ${NODES} nodes, ${SERVICES} services, ${cluster.slices.length} slices with ${cluster.endpoints} endpoints; ${cpus().length} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; CoreDNS: ${coredns ?? 'not built (bash bench/build-coredns.sh)'}`);

const api = await startBenchCluster();
const running: ApiDnsServer[] = [];
const figures: Record<string, Figures> = {};
let createS = 0;
let proxy: ApiProxy | undefined;
let expiryCut: { ms: number; writes: number } | undefined;
try {
  await inTempDir('kdt-bench-scale-', async (dir) => {
    const t0 = performance.now();
    for (let n = 0; n < NAMESPACES; n++) await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsOf(n) } });
    await api.createAll(cluster.nodes, CONCURRENCY);
    await api.createAll(cluster.pods, CONCURRENCY, (done) => console.log(`  pods created and addressed: ${done}/${PODS}`), (pod) => {
      const ip = podIp(Number(pod.metadata.name.slice(4)));
      return api.patchStatus(pod, { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: '192.0.2.1', conditions: [{ type: 'Ready', status: 'True' }] });
    });
    await api.createAll(cluster.services, CONCURRENCY);
    await api.createAll(cluster.slices, CONCURRENCY, (done) => console.log(`  slices: ${done}/${cluster.slices.length}`));
    await api.create(service('last', HUGE_NS));
    createS = (performance.now() - t0) / 1000;
    console.log(`  created in ${createS.toFixed(0)} s`);
    const queries = join(dir, 'queries');
    writeFileSync(queries, cluster.queries);
    const last = `last.${HUGE_NS}.svc.cluster.local`;
    if (HOLD) return holdUntilInterrupted(api);

    // One at a time, so no start competes with another's list. `via` is the API server's address (direct,
    // or the proxy the servers kept running reach it through, so that they alone can be cut off).
    type Start = (via: string) => Promise<ApiDnsServer>;
    const kubeconfigs = (via: string) => ({ dns: api.cluster.kubeconfig(api.cluster.kubeDnsToken, via), admin: api.cluster.kubeconfig(api.cluster.adminToken, via) });
    const starts: [string, Start][] = [
      ['kube-dns --autopath', (via) => startKubeDnsApi(dir, kubeconfigs(via).dns, { name: 'kube-dns --autopath', args: ['--autopath'] })],
      ['kube-dns', (via) => startKubeDnsApi(dir, kubeconfigs(via).dns, { name: 'kube-dns', args: ['--autopath=false'] })],
    ];
    // BENCH_SCALE_FLAGS: kube-dns also with these Node flags instead of its bin's (e.g. without --optimize-for-size).
    const flags = process.env.BENCH_SCALE_FLAGS?.split(' ').filter(Boolean);
    if (flags) {
      const tag = `node ${flags.join(' ') || '(no flags)'}`;
      starts.push([`kube-dns --autopath, ${tag}`, (via) => startKubeDnsApi(dir, kubeconfigs(via).dns, { name: 'kube-dns-autopath-flags', args: ['--autopath'], nodeFlags: flags })]);
      starts.push([`kube-dns, ${tag}`, (via) => startKubeDnsApi(dir, kubeconfigs(via).dns, { name: 'kube-dns-flags', args: ['--autopath=false'], nodeFlags: flags })]);
    }
    if (coredns) {
      starts.push(['CoreDNS pods verified + autopath', (via) => startCoreDnsWith(coredns, dir, 'coredns-pods', `kubernetes cluster.local {\n  kubeconfig ${kubeconfigs(via).admin}\n  pods verified\n}\nautopath @kubernetes`)]);
      starts.push(['CoreDNS', (via) => startCoreDnsWith(coredns, dir, 'coredns', `kubernetes cluster.local {\n  kubeconfig ${kubeconfigs(via).admin}\n}`)]);
    }
    // STARTS rounds, each server started alone and stopped in turn (alternated, so drift in the machine
    // falls on all alike): the medians. Then each started once more and kept running for the rest.
    const timesOf: Record<string, { ready: number[]; first: number[] }> = {};
    for (let round = 0; round < STARTS; round++) {
      for (const [name, start] of starts) {
        const s = await started(() => start(api.cluster.url), last);
        await s.server.daemon.stop();
        const seen = (timesOf[name] ??= { ready: [], first: [] });
        seen.ready.push(s.figures.readyMs);
        seen.first.push(s.figures.firstAnswerMs);
        console.log(`  ${name}: ready ${s.figures.readyMs.toFixed(0)} ms, first answer ${s.figures.firstAnswerMs.toFixed(0)} ms`);
      }
    }
    proxy = await ApiProxy.start(Number(new URL(api.cluster.url).port));
    for (const [name, start] of starts) {
      const s = await started(() => start(`https://127.0.0.1:${proxy!.port}`), last);
      s.server.name = name;
      running.push(s.server);
      const seen = timesOf[name];
      figures[name] = { ...s.figures, readyMs: median(seen.ready), firstAnswerMs: median(seen.first), readyRange: [Math.min(...seen.ready), Math.max(...seen.ready)] };
    }
    await sleep(15_000);
    for (const s of running) figures[s.name].steadyMiB = rssMiB(s.daemon.pid!);
    console.log(`  steady RSS: ${running.map((s) => `${s.name} ${figures[s.name].steadyMiB.toFixed(0)} MiB`).join(', ')}`);

    const relisted = await relist(api, running);
    running.forEach((s, k) => (figures[s.name].relist = relisted[k]));
    console.log(`  re-list peaks: ${running.map((s) => `${s.name} ${figures[s.name].relist!.peakMiB.toFixed(0)} MiB`).join(', ')}`);

    // One object of each kind any of the servers watches, rewritten until its watches expire.
    const written = [service('last', HUGE_NS), cluster.slices.at(-1)!, cluster.pods[0], cluster.nodes[0]];
    const expired = await expiry(api, proxy, running, written);
    running.forEach((s, k) => (figures[s.name].expiry = expired.figures[k]));
    expiryCut = { ms: expired.cutMs, writes: expired.writes };
    console.log(`  watch expiry (cut ${(expired.cutMs / 1000).toFixed(0)} s, ${expired.writes} writes) peaks: ${running.map((s) => `${s.name} ${figures[s.name].expiry!.peakMiB.toFixed(0)} MiB`).join(', ')}`);

    const watch = await changes(running, CHANGES, 'AAAA', (i) => api.create(service(`watch-${i}`, nsOf(i))), (i) => `watch-${i}.${nsOf(i)}.svc.cluster.local`);
    running.forEach((s, k) => (figures[s.name].watch = latencySummary(watch[k])));
    // Headless endpoints' names are A records.
    const propagation = await changes(running, PROPAGATIONS, 'A', async (i) => {
      const n = HUGE - PROPAGATIONS + i;
      const slice = cluster.huge[Math.floor(n / SLICE_MAX)] as KubeObject & { endpoints: { conditions: { ready: boolean } }[] };
      slice.endpoints[n % SLICE_MAX].conditions.ready = true;
      await api.replace(slice);
    }, (i) => `h-${HUGE - PROPAGATIONS + i}.huge.${HUGE_NS}.svc.cluster.local`);
    running.forEach((s, k) => (figures[s.name].propagation = latencySummary(propagation[k])));

    const loaded = await load(running, queries);
    running.forEach((s, k) => Object.assign(figures[s.name], { qps: loaded[k].qps, cpuUsPerQuery: loaded[k].cpuUs }));
  });
} finally {
  for (const s of running) await s.daemon.stop();
  await proxy?.close();
  await api.close();
}
if (HOLD) process.exit(0);

// CoreDNS's own sizing rule (its kubernetes plugin's README): MB for the objects it watches.
const objects = PODS + SERVICES;
const formula = { withoutPods: objects / 1000 + 54, withPods: objects / 250 + 56 };
const n = (x: number | undefined, d = 0) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
const lat = (l?: LatencySummary) => (l ? `${n(l.p50Ms, 1)} / ${n(l.p99Ms, 1)} / ${n(l.maxMs, 1)}${l.timeouts ? ` (${l.timeouts} never)` : ''}` : '-');
const range = (r?: [number, number]) => (r ? ` (${n(r[0])}-${n(r[1])})` : '');
const rows = Object.entries(figures).map(([name, f]) => `| ${name} | ${n(f.readyMs)}${range(f.readyRange)} | ${n(f.firstAnswerMs)} | ${n(f.steadyMiB, 1)} | ${n(f.relist?.peakMiB, 1)} (${n((f.relist?.peakMiB ?? NaN) / f.steadyMiB, 2)}×) | ${n(f.relist?.backMs)} | ${n(f.expiry?.peakMiB, 1)} (${n((f.expiry?.peakMiB ?? NaN) / f.steadyMiB, 2)}×) | ${n(f.expiry?.backMs)}${f.expiry?.relists === undefined ? '' : ` (${f.expiry.relists} lists, ${f.expiry.expired} 410s: ${f.expiry.expiredKinds?.join(', ')})`} | ${lat(f.watch)} | ${lat(f.propagation)} | ${n(f.qps)} | ${n(f.cpuUsPerQuery, 1)} |`);
const when = new Date().toISOString();
const md = `# kube-dns and CoreDNS at scale against a real kube-apiserver: ${PODS.toLocaleString('en')} pods (${when})

node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB; kube-apiserver v1.36.3 + etcd (test/e2e/harness) on loopback. ${PODS.toLocaleString('en')} pods with addresses on ${NODES.toLocaleString('en')} Nodes in ${NAMESPACES} namespaces; ${SERVICES.toLocaleString('en')} Services (one headless of ${HUGE.toLocaleString('en')} endpoints, ${LARGE} of ${LARGE_ENDPOINTS}, the rest 1-${cluster.spread}, every tenth headless, ${EXTERNAL_NAMES} ExternalNames), ${cluster.slices.length.toLocaleString('en')} EndpointSlices of at most ${SLICE_MAX} holding ${cluster.endpoints.toLocaleString('en')} endpoints; created through the API in ${createS.toFixed(0)} s before any server started. Each server was started alone ${STARTS} times, alternated with the others (each stopped before the next started); then all were started once more and ran together for the rest.

Ready: spawn → readiness 200 (kube-dns /readiness, CoreDNS ready), the median of the ${STARTS} starts (least-most); first answer: spawn → the last Service created answers, the median. Steady: RSS after 15 s idle. Re-list: the kube-apiserver restarted while every server ran, RSS sampled every 100 ms until each answered a Service created after the restart (ms from the restart's start), then 10 s more. Expiry: the API server kept running, every server cut off from it (they reached it through a TCP proxy, which reset their connections and refused new ones) while one object of each kind (Service, EndpointSlice, Pod, Node) was rewritten until a watch from the version current at the cut was answered 410 Gone (${n((expiryCut?.ms ?? NaN) / 1000)} s, ${n(expiryCut?.writes)} writes); then let back: RSS as for the restart, ms from the restore until each answered a Service created during the cut (each client's reconnect backoff included); for kube-dns, its lists after the first and 410s by its metrics. Watch: ${CHANGES} Services created one after another, ms from the POST returning to the answer. Propagation: ${PROPAGATIONS} endpoints of the huge Service turned ready one after another, ms to their names answering. QPS: dnsperf -T 1 -c 1 -q 200 -l ${SECONDS} over the ClusterIP Services' names (AAAA), one server after another; CPU µs per query from /proc.

| server | ready ms | first answer ms | steady RSS MiB | re-list peak MiB | back after restart ms | expiry peak MiB | back after expiry ms | watch p50 / p99 / max ms | propagation p50 / p99 / max ms | QPS | CPU µs/query |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

CoreDNS's sizing rule for these ${objects.toLocaleString('en')} pods + Services: ${formula.withoutPods.toFixed(0)} MB without its pod watch ((pods + services)/1000 + 54), ${formula.withPods.toFixed(0)} MB with it ((pods + services)/250 + 56). Goals (issue 27): ready ≤ CoreDNS; steady RSS ≤ that rule; re-list peak ≤ 1.25× steady; watch p99 ≤ 100 ms; propagation p99 ≤ 1 s.
`;
writeResults(`scale-api-${PODS}`, when, { node: process.version, cpus: cpus().length, pods: PODS, nodes: NODES, services: SERVICES, slices: cluster.slices.length, endpoints: cluster.endpoints, createS, expiryCut, formula, figures }, md);
