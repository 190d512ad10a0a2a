// npm run bench:rollout: what an operation on the cluster DNS costs the pods that ask it, ours beside
// CoreDNS as kubeadm deploys it (bench/coredns-kubeadm.yaml, lameduck 5s), on one real single-node
// cluster (test/cluster/harness, kube-proxy iptables). A client pod asks through the kube-dns ClusterIP:
// dnsperf at 1,000 queries/s over 20 long-lived sockets (2 s timeout: lost = no answer by then) and,
// at the same time, 10 lookups/s each from a new socket (dig, one try of 2 s). Each disruption —
// `kubectl delete pod` of one of the two pods, `kubectl rollout restart` — RUNS times per system.
// Both paths a pod's DNS takes: straight to the cluster DNS (its ClusterIP), and behind node-cache
// (manifests/optional/node-local-dns.yaml holding the ClusterIP on the node), there with names no cache
// holds so that every query still reaches the pods being disrupted. BENCH_ROLLOUT_PATHS picks
// (`direct,node-cache`, the default). Three systems in turn: our addon, CoreDNS as kubeadm deploys it,
// and kubeadm's coredns Deployment with only its image set to ours (issue 25's swap);
// BENCH_ROLLOUT_SYSTEMS picks which are measured (all deployed in turn, for the Service and the
// client). Writes bench/results/rollout-<date>.{json,md}. Needs what the
// cluster tier needs (root, the cached binaries, test/cluster/images/build.sh) and CoreDNS's image
// (test/cluster/images/build-coredns.sh).

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { clusterMissing, startNodeCluster } from '../test/cluster/harness/cluster.ts';
import type { NodeCluster } from '../test/cluster/harness/cluster.ts';
import { deployAddon, deployNodeLocalDns, describe, startClientPod, waitFor } from '../test/cluster/harness/addon.ts';
import { dnsDeployment, ISSUE_LOAD, lossDuring, podsOf, prepareLoad, prepareMissLoad } from '../test/cluster/harness/rollout.ts';
import type { Disruption } from '../test/cluster/harness/rollout.ts';
import { readManifest, README_VALUES } from '../test/e2e/harness/manifests.ts';
import { k8sBin } from '../test/e2e/harness/binaries.ts';
import { benchScope, commitOf, writeResults } from './report.ts';
import { repoRoot } from './servers.ts';

const RUNS = Number(process.env.BENCH_ROLLOUT_RUNS ?? 5);
type Path = 'direct' | 'node-cache';
const PATHS = (process.env.BENCH_ROLLOUT_PATHS ?? 'direct,node-cache').split(',') as Path[];
const COREDNS_IMAGE = 'coredns/coredns:v1.15.0';
/**
 * Long enough for every system's slowest disruption: a rollout of CoreDNS waits for 10 s probes, and ours
 * in the coredns Deployment answers until kubeadm's probe takes the pod out (20-30 s after SIGTERM).
 */
const SECONDS: Record<Disruption, number> = { 'pod deleted': 45, 'rollout restart': 100 };
const NS = 'default';
const CLIENT = 'client';

const ALL_SYSTEMS = ['kube-dns-ts', 'CoreDNS', 'kube-dns-ts in the coredns Deployment'] as const;
type System = (typeof ALL_SYSTEMS)[number];
const MEASURED = (process.env.BENCH_ROLLOUT_SYSTEMS ?? ALL_SYSTEMS.join(',')).split(',') as System[];
/** Our kube-dns image, as manifests/kube-dns.yaml names it. */
const OUR_IMAGE = readManifest('kube-dns.yaml', README_VALUES).find((o) => o.kind === 'Deployment')!.spec.template.spec.containers.find((c: { name: string }) => c.name === 'kubedns').image as string;
interface Run {
  system: System;
  path: Path;
  disruption: Disruption;
  disruptionMs: number;
  sent: number;
  lost: number;
  lookups: number;
  failedLookups: string[];
  /** The deleted pod's log lines about its lame duck (pod deleted only). */
  lameDuck: string;
}

/** Our Deployment out, kubeadm's CoreDNS in, behind the same kube-dns Service. */
async function switchToCoreDns(c: NodeCluster): Promise<number> {
  await c.kubectl(['-n', 'kube-system', 'delete', 'deployment', 'kube-dns']);
  await waitFor('our pods gone', async () => (await podsOf(c)).length === 0, 60_000);
  const manifest = readFileSync(join(repoRoot, 'bench/coredns-kubeadm.yaml'), 'utf8');
  await c.apply(manifest);
  await waitFor('CoreDNS available', async () => (await c.request('GET', '/apis/apps/v1/namespaces/kube-system/deployments/coredns')).body.status?.availableReplicas === 2, 180_000, () => describe(c, 'kube-system'));
  return 2;
}

/** `kubectl set image deployment/coredns coredns=<ours>`, nothing else changed; resolves once it rolled out. */
async function swapInOurImage(c: NodeCluster): Promise<number> {
  await c.kubectl(['-n', 'kube-system', 'set', 'image', 'deployment/coredns', `coredns=${OUR_IMAGE}`]);
  await c.kubectl(['-n', 'kube-system', 'rollout', 'status', 'deployment/coredns', '--timeout=180s'], 200_000);
  // The rollout is done when ours are available; CoreDNS's pods may still be in their lame duck, and the
  // flows pinned to them would be lost in the first run when they exit.
  await waitFor("CoreDNS's pods gone", async () => (await podsOf(c)).every((p) => !p.terminating), 120_000);
  return 2;
}

/**
 * The log of the pod `kubectl delete pod` will take (the first of the workload's), followed until it
 * exits: how its lame duck ended. Stopped by the returned function.
 */
async function followDeleted(c: NodeCluster, w: ReturnType<typeof dnsDeployment>): Promise<() => string> {
  const [pod] = await podsOf(c, w.selector);
  const kubectl = spawn(k8sBin('kubectl'), [`--kubeconfig=${c.kubeconfig}`, '-n', 'kube-system', 'logs', '-f', pod.name], { stdio: ['ignore', 'pipe', 'ignore'] });
  let log = '';
  kubectl.stdout.on('data', (d: Buffer) => (log += d.toString()));
  return () => {
    kubectl.kill();
    return log.split('\n').filter((l) => /lame duck|shutting down/.test(l)).join('\n');
  };
}

async function measure(c: NodeCluster, system: System, path: Path, deployment: string, replicas: number, runs: Run[]): Promise<void> {
  if (!MEASURED.includes(system)) return;
  for (const disruption of ['pod deleted', 'rollout restart'] as const) {
    for (let i = 0; i < RUNS; i++) {
      const w = dnsDeployment(deployment, replicas);
      const follow = disruption === 'pod deleted' ? await followDeleted(c, w) : null;
      const r = await lossDuring(c, NS, CLIENT, { ...ISSUE_LOAD, seconds: SECONDS[disruption] }, w, disruption);
      const lameDuck = follow?.() ?? '';
      console.log(`# ${system} (${path}), ${disruption} #${i + 1}: ${r.disruptionMs} ms; dnsperf sent ${r.sent}, lost ${r.lost}; lookups ${r.lookups}, failed ${r.failedLookups.length}${lameDuck ? `\n${lameDuck}` : ''}`);
      runs.push({ system, path, disruption, disruptionMs: r.disruptionMs, sent: r.sent, lost: r.lost, lookups: r.lookups, failedLookups: r.failedLookups, lameDuck });
    }
  }
}

/** Measures `system` on each path in PATHS, node-cache last (it stays deployed). */
async function measurePaths(c: NodeCluster, system: System, deployment: string, replicas: number, runs: Run[]): Promise<void> {
  for (const path of PATHS) {
    if (path === 'node-cache') {
      await deployNodeLocalDns(c);
      await prepareMissLoad(c, NS, CLIENT);
    } else await prepareLoad(c, NS, CLIENT);
    await measure(c, system, path, deployment, replicas, runs);
  }
}

/** node-cache gone (it gives the ClusterIP back to kube-proxy's rules at exit). */
async function removeNodeLocalDns(c: NodeCluster): Promise<void> {
  await c.kubectl(['-n', 'kube-system', 'delete', 'daemonset', 'node-local-dns', '--wait=true']);
  await waitFor('node-local-dns gone', async () => (await c.request('GET', '/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dnode-local-dns')).body.items.length === 0, 60_000);
}

function report(runs: Run[], when: string, load: string): string {
  const rows: string[] = [];
  for (const path of PATHS) {
    for (const disruption of ['pod deleted', 'rollout restart'] as const) {
      for (const system of ALL_SYSTEMS.filter((s) => MEASURED.includes(s))) {
        const cell = (f: (r: Run) => number) => runs.filter((r) => r.system === system && r.path === path && r.disruption === disruption).map(f).join(' / ');
        rows.push(`| ${path} | ${disruption} | ${system} | ${cell((r) => r.lost)} | ${cell((r) => r.failedLookups.length)} | ${cell((r) => Math.round(r.disruptionMs / 100) / 10)} |`);
      }
    }
  }
  const failures = runs.flatMap((r) => r.failedLookups.map((f) => `- ${r.system} (${r.path}), ${r.disruption}: ${f}`));
  const ducks = runs.filter((r) => r.lameDuck !== '').map((r) => `- ${r.system} (${r.path}), lost ${r.lost}:\n${r.lameDuck.split('\n').map((l) => `  - \`${l.trim()}\``).join('\n')}`);
  return `# Rolling the cluster DNS under load (${when})

${load}

| path | disruption | system | dnsperf lost, per run | new-socket lookups failed, per run | disruption (s), per run |
|---|---|---|---|---|---|
${rows.join('\n')}
${failures.length > 0 ? `\nFailed lookups:\n${failures.join('\n')}\n` : ''}${ducks.length > 0 ? `\nThe deleted pods' lame ducks, from their logs:\n${ducks.join('\n')}\n` : ''}`;
}

async function main(): Promise<void> {
  const missing = clusterMissing();
  if (missing !== null) throw new Error(`cannot run a cluster here: ${missing}`);
  const when = new Date().toISOString();
  const load = `${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${loadavg()[0].toFixed(2)}. One node (kube-proxy iptables), 2 replicas each: manifests/kube-dns.yaml as the README deploys it; CoreDNS ${COREDNS_IMAGE.split(':')[1]} as kubeadm deploys it (bench/coredns-kubeadm.yaml: lameduck 5s, readiness /ready every 10 s, maxUnavailable 1), then the same Deployment with only its image set to ours (${OUR_IMAGE}). Measured: ${MEASURED.join(', ')}. In a client pod, through the ClusterIP: dnsperf -c ${ISSUE_LOAD.sockets} -Q ${ISSUE_LOAD.qps} -t ${ISSUE_LOAD.timeoutS} for ${SECONDS['pod deleted']} s (pod deleted) or ${SECONDS['rollout restart']} s (rollout restart), the disruption 3 s in; beside it dig +tries=1 +time=${ISSUE_LOAD.timeoutS}, a new process and socket per lookup, ${ISSUE_LOAD.lookupsPerSecond}/s. Paths: ${PATHS.join(', ')}; direct: dnsperf asks 4 names of the cluster (A, AAAA, SRV); node-cache: our node-cache (manifests/optional/node-local-dns.yaml) holds the ClusterIP on the node and forwards over TCP to the kube-dns-upstream Service, and dnsperf asks 120,000 distinct names no cache holds (NXDOMAIN), so every query reaches the pods being disrupted. ${RUNS} runs each, in order.`;
  const scope = benchScope();
  const runs: Run[] = [];
  try {
    const c = await startNodeCluster(scope.t, { proxyMode: 'iptables', images: [COREDNS_IMAGE] });
    const replicas = (await deployAddon(c)).spec.replicas as number;
    await startClientPod(c, NS, CLIENT);
    await measurePaths(c, 'kube-dns-ts', 'kube-dns', replicas, runs);
    if (PATHS.includes('node-cache')) await removeNodeLocalDns(c);
    await measurePaths(c, 'CoreDNS', 'coredns', await switchToCoreDns(c), runs);
    if (PATHS.includes('node-cache')) await removeNodeLocalDns(c);
    await measurePaths(c, 'kube-dns-ts in the coredns Deployment', 'coredns', await swapInOurImage(c), runs);
  } finally {
    await scope.close();
  }
  writeResults('rollout', when, { load, runs }, report(runs, when, load));
}

await main();
