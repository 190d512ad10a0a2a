// npm run bench:autopath (also part of npm run bench): what --autopath buys and costs.
//  1. Lookup latency of outside names through the pod, from glibc's getaddrinfo in a pod-like network
//     namespace with the kubelet's resolv.conf: a pod kube-dns knows (one query per family) against a
//     pod it does not (the whole search walk), lookups alternated, each of a name never asked before
//     (<i>.bench.test, answered by a real dnsmasq standing in for the world). Needs root.
//  2. kube-dns's memory with PODS pods watched through a real kube-apiserver (created, then given an
//     address through the status subresource as the kubelet does), against the same kube-dns without
//     the pod watch, both running at once. Needs the API server binaries (test/e2e/harness).
// Writes bench/results/autopath-<date>.{json,md}. A part whose needs are missing is skipped, said so.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { startDnsPod } from '../test/helpers/autopath-pod.ts';
import { podNetwork } from '../test/helpers/netns.ts';
import { buildResolvers } from '../test/helpers/resolvers.ts';
import { sample, scrape } from '../test/helpers/sidecar.ts';
import { binariesAvailable, startBenchCluster } from './api-cluster.ts';
import type { BenchCluster, KubeObject } from './api-cluster.ts';
import { corednsBin, startCoreDnsWith, startKubeDnsApi } from './api-servers.ts';
import type { ApiDnsServer } from './api-servers.ts';
import { benchScope, inTempDir, writeResults } from './report.ts';
import { cpuTimeMs, rssMiB } from './servers.ts';
import { percentile } from './stats.ts';

const run = promisify(execFile);
const LOOKUPS = Number(process.env.BENCH_AUTOPATH_LOOKUPS ?? 1000);
const WARMUP = 50;
const PODS = Number(process.env.BENCH_AUTOPATH_PODS ?? 100_000);
const NAMESPACES = 100;
/** Pod status updates a second while CPU is measured, and for how long. */
const CHURN_RATE = Number(process.env.BENCH_AUTOPATH_CHURN_RATE ?? 200);
const CHURN_SECONDS = 30;


interface Latency {
  lookups: number;
  withP50: number;
  withP99: number;
  withoutP50: number;
  withoutP99: number;
}

/** Part 1: microseconds per getaddrinfo of a fresh outside name, known pod against unknown pod. */
async function latency(): Promise<Latency | string> {
  if (process.getuid?.() !== 0) return 'skipped: network namespaces need root';
  const scope = benchScope();
  try {
    const glibc = buildResolvers(scope.t).get('glibc');
    if (glibc === undefined) return 'skipped: gcc could not build the glibc client';
    const net = podNetwork(scope.t, ['default', 'default']);
    const [known, unknown] = net.clients;
    await startDnsPod(scope.t, net.dns, [known], { logQueries: false });
    const times = { with: [] as number[], without: [] as number[] };
    // Batches of 10 lookups per process, alternated, so both pods see the same moment of the machine;
    // the first WARMUP of each are not counted (both paths' code compiled before it is timed).
    for (let i = -WARMUP; i < LOOKUPS; i += 10) {
      for (const [who, pod] of [['with', known], ['without', unknown]] as const) {
        const names = Array.from({ length: 10 }, (_, k) => `${who}-${i + k}.bench.test`);
        const { stdout } = await run('ip', ['netns', 'exec', pod.netns, glibc, '-t', ...names], { timeout: 60_000 });
        if (i >= 0) for (const line of stdout.trim().split('\n')) times[who].push(Number(line.split(' ')[1]));
      }
    }
    const w = times.with.sort((a, b) => a - b);
    const wo = times.without.sort((a, b) => a - b);
    return { lookups: w.length, withP50: percentile(w, 50), withP99: percentile(w, 99), withoutP50: percentile(wo, 50), withoutP99: percentile(wo, 99) };
  } finally {
    await scope.close();
  }
}

interface Footprint {
  rssMiB: number;
  /** V8 heap in use plus memory outside it held by JS objects (ArrayBuffers: the index's arrays). */
  retainedMiB: number;
}

interface Churn {
  /** Pod status updates sent, and the seconds from the first to the servers' last chance to read them. */
  events: number;
  seconds: number;
  /** CPU milliseconds each server used meanwhile, by name. */
  cpuMs: Record<string, number>;
}

interface Memory {
  pods: number;
  indexBytes: number;
  with: Footprint;
  without: Footprint;
  /** Retained memory with the pod watch minus without, per pod. */
  bytesPerPod: number;
  rssBytesPerPod: number;
  /** CoreDNS's RSS (MiB) with `pods verified` (what its autopath needs) and without, when it is built. */
  coredns?: { with: number; without: number };
  churn: Churn;
  createSeconds: number;
}

/** One sample of a kube-dns's /metrics. */
const metric = async (httpPort: number, name: string): Promise<number> => sample(await scrape(httpPort), name);

async function footprint(s: ApiDnsServer): Promise<Footprint> {
  const retained = (await metric(s.httpPort!, 'nodejs_heap_size_used_bytes')) + (await metric(s.httpPort!, 'nodejs_external_memory_bytes'));
  return { rssMiB: rssMiB(s.daemon.pid!), retainedMiB: retained / 1024 / 1024 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuMs = (pid: number) => {
  const t = cpuTimeMs(pid);
  return t.user + t.sys;
};

function benchPods(): KubeObject[] {
  return Array.from({ length: PODS }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: `bench-${i % NAMESPACES}`, labels: { app: `app-${i % 1000}` } } as KubeObject['metadata'],
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080 }] }], nodeName: `node-${i % 500}` },
  }));
}

/** What a kubelet writes when a pod's container restarts and its readiness flips: the event the watch parses. */
function kubeletStatus(n: number): object {
  const ready = n % 2 === 0 ? 'True' : 'False';
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const id = createHash('sha256').update(String(n)).digest('hex');
  const condition = (type: string, status: string) => ({ type, status, lastProbeTime: null, lastTransitionTime: now });
  return {
    conditions: [condition('PodReadyToStartContainers', 'True'), condition('Initialized', 'True'), condition('Ready', ready), condition('ContainersReady', ready), condition('PodScheduled', 'True')],
    containerStatuses: [{ name: 'app', ready: ready === 'True', started: true, restartCount: n, image: 'registry.example/app:1.0', imageID: `registry.example/app@sha256:${id}`, containerID: `containerd://${id}`, state: { running: { startedAt: now } } }],
  };
}

/** CHURN_RATE status updates a second for CHURN_SECONDS, spread over the pods; the CPU each server spent. */
async function churn(api: BenchCluster, pods: KubeObject[], servers: ApiDnsServer[]): Promise<Churn> {
  const before = servers.map((s) => cpuMs(s.daemon.pid!));
  const started = performance.now();
  const events = CHURN_RATE * CHURN_SECONDS;
  let next = 0;
  const worker = async () => {
    while (next < events) {
      const n = next++;
      const wait = started + (n * 1000) / CHURN_RATE - performance.now();
      if (wait > 0) await sleep(wait);
      await api.patchStatus(pods[(n * 7919) % pods.length], kubeletStatus(n));
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await sleep(3000); // the watchers read what the API server still had to send
  const used = servers.map((s, i) => [s.name, cpuMs(s.daemon.pid!) - before[i]] as const);
  return { events, seconds: (performance.now() - started) / 1000, cpuMs: Object.fromEntries(used) };
}

/** kube-dns's memory with PODS pods watched, against kube-dns without the watch (and CoreDNS likewise). */
async function memory(): Promise<Memory | string> {
  if (!binariesAvailable().ok) return 'skipped: no kube-apiserver/etcd (bash test/e2e/harness/build-binaries.sh)';
  const api = await startBenchCluster();
  const running: ApiDnsServer[] = [];
  try {
    return await inTempDir('kdt-bench-autopath-', async (dir) => {
      for (let n = 0; n < NAMESPACES; n++) await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bench-${n}` } });
      const pods = benchPods();
      const started = performance.now();
      await api.createAll(pods, 32, (done) => process.stdout.write(`\r# pods created and addressed: ${done}/${PODS}`), (pod) => {
        const i = Number(pod.metadata.name.slice(4));
        const ip = `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
        return api.patchStatus(pod, { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: '192.0.2.1' });
      });
      const createSeconds = (performance.now() - started) / 1000;
      console.log();
      // The kube-dns identity, bound by the shipped RBAC.
      const kubeconfig = api.cluster.kubeconfig(api.cluster.kubeDnsToken);
      const withIt = await startKubeDnsApi(dir, kubeconfig, { name: 'kube-dns --autopath', args: ['--autopath'] });
      const without = await startKubeDnsApi(dir, kubeconfig, { name: 'kube-dns --autopath=false', args: ['--autopath=false'] });
      running.push(withIt, without);
      const coredns = corednsBin();
      if (coredns !== null) {
        const admin = api.cluster.kubeconfig(api.cluster.adminToken);
        running.push(await startCoreDnsWith(coredns, dir, 'coredns pods verified', `kubernetes cluster.local {\n  kubeconfig ${admin}\n  pods verified\n}\nautopath @kubernetes`));
        running.push(await startCoreDnsWith(coredns, dir, 'coredns', `kubernetes cluster.local {\n  kubeconfig ${admin}\n}`));
      }
      const deadline = Date.now() + 300_000;
      while ((await metric(withIt.httpPort!, 'kubedns_autopath_pods')) < PODS) {
        if (Date.now() > deadline) throw new Error('kube-dns did not learn every pod address in 5 minutes');
        await sleep(500);
      }
      // Idle long enough for V8's memory reducer to collect what the list pages took.
      await sleep(30_000);
      const w = await footprint(withIt);
      const wo = await footprint(without);
      const indexBytes = await metric(withIt.httpPort!, 'kubedns_autopath_index_bytes');
      const corednsRss = coredns === null ? undefined : { with: rssMiB(running[2].daemon.pid!), without: rssMiB(running[3].daemon.pid!) };
      const podChurn = await churn(api, pods, running);
      const perPod = (mib: number) => (mib * 1024 * 1024) / PODS;
      return {
        pods: PODS, indexBytes, with: w, without: wo, bytesPerPod: perPod(w.retainedMiB - wo.retainedMiB), rssBytesPerPod: perPod(w.rssMiB - wo.rssMiB),
        coredns: corednsRss, churn: podChurn, createSeconds,
      };
    });
  } finally {
    for (const s of running) await s.daemon.stop();
    await api.close();
  }
}

const when = new Date().toISOString();
const lat = await latency();
const mem = await memory();
const ms = (us: number) => (us / 1000).toFixed(2);
const md = [
  `# --autopath (${when})`,
  '',
  '## Lookup latency, outside names through the pod (glibc getaddrinfo, kubelet resolv.conf, each name new)',
  '',
  typeof lat === 'string'
    ? lat
    : [
        '| pod | lookups | p50 ms | p99 ms |',
        '|---|---|---|---|',
        `| known to kube-dns (autopath: 2 queries) | ${lat.lookups} | ${ms(lat.withP50)} | ${ms(lat.withP99)} |`,
        `| unknown (the whole walk: 8 queries) | ${lat.lookups} | ${ms(lat.withoutP50)} | ${ms(lat.withoutP99)} |`,
        `| ratio with/without | | ${(lat.withP50 / lat.withoutP50).toFixed(2)} | ${(lat.withP99 / lat.withoutP99).toFixed(2)} |`,
      ].join('\n'),
  '',
  `## kube-dns memory with ${PODS.toLocaleString('en')} pods watched (real kube-apiserver)`,
  '',
  typeof mem === 'string'
    ? mem
    : [
        '| kube-dns | retained MiB (heap used + external) | RSS MiB |',
        '|---|---|---|',
        `| without the pod watch | ${mem.without.retainedMiB.toFixed(1)} | ${mem.without.rssMiB.toFixed(1)} |`,
        `| --autopath | ${mem.with.retainedMiB.toFixed(1)} | ${mem.with.rssMiB.toFixed(1)} |`,
        `| difference per pod | ${mem.bytesPerPod.toFixed(1)} bytes (goal ≤ 30) | ${mem.rssBytesPerPod.toFixed(1)} bytes |`,
        '',
        `The index itself (kubedns_autopath_index_bytes): ${mem.indexBytes} bytes, ${(mem.indexBytes / mem.pods).toFixed(1)} a pod. Retained memory is read after 30 s idle. Creating and addressing the pods took ${mem.createSeconds.toFixed(0)} s.`,
        '',
        mem.coredns === undefined
          ? 'CoreDNS: not built (bench/build-coredns.sh), not compared.'
          : [
              '| CoreDNS (same pods, same moment) | RSS MiB |',
              '|---|---|',
              `| kubernetes plugin | ${mem.coredns.without.toFixed(1)} |`,
              `| with \`pods verified\` (what its autopath needs) | ${mem.coredns.with.toFixed(1)} |`,
              `| difference per pod | ${(((mem.coredns.with - mem.coredns.without) * 1024 * 1024) / mem.pods).toFixed(1)} bytes |`,
            ].join('\n'),
        '',
        `## CPU of pod churn: ${mem.churn.events} kubelet status updates in ${mem.churn.seconds.toFixed(1)} s (${CHURN_RATE}/s asked), all servers at once`,
        '',
        '| server | CPU ms | CPU share | ms per 1,000 updates |',
        '|---|---|---|---|',
        ...Object.entries(mem.churn.cpuMs).map(([name, cpu]) => `| ${name} | ${cpu} | ${((100 * cpu) / (mem.churn.seconds * 1000)).toFixed(1)}% | ${((cpu * 1000) / mem.churn.events).toFixed(1)} |`),
      ].join('\n'),
  '',
].join('\n');
writeResults('autopath', when, { latency: lat, memory: mem }, md);
