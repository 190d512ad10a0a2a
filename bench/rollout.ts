// npm run bench:rollout: what an operation on the cluster DNS costs the pods that ask it, ours beside
// CoreDNS as kubeadm deploys it (bench/coredns-kubeadm.yaml, lameduck 5s), on one real single-node
// cluster (test/cluster/harness, kube-proxy iptables). A client pod asks through the kube-dns ClusterIP:
// dnsperf at 1,000 queries/s over 20 long-lived sockets (2 s timeout: lost = no answer by then) and,
// at the same time, 10 lookups/s each from a new socket (dig, one try of 2 s). Each disruption —
// `kubectl delete pod` of one of the two pods, `kubectl rollout restart` — RUNS times per system.
// Writes bench/results/rollout-<date>.{json,md}. Needs what the cluster tier needs (root, the cached
// binaries, test/cluster/images/build.sh) and CoreDNS's image (test/cluster/images/build-coredns.sh).

import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { clusterMissing, startNodeCluster } from '../test/cluster/harness/cluster.ts';
import type { NodeCluster } from '../test/cluster/harness/cluster.ts';
import { deployAddon, describe, startClientPod, waitFor } from '../test/cluster/harness/addon.ts';
import { dnsDeployment, ISSUE_LOAD, lossDuring, podsOf, prepareLoad } from '../test/cluster/harness/rollout.ts';
import type { Disruption } from '../test/cluster/harness/rollout.ts';
import { benchScope, commitOf, writeResults } from './report.ts';
import { repoRoot } from './servers.ts';

const RUNS = Number(process.env.BENCH_ROLLOUT_RUNS ?? 5);
const COREDNS_IMAGE = 'coredns/coredns:v1.15.0';
/** Long enough for either system's slowest disruption (a rollout of CoreDNS waits for 10 s probes). */
const SECONDS: Record<Disruption, number> = { 'pod deleted': 30, 'rollout restart': 60 };
const NS = 'default';
const CLIENT = 'client';

type System = 'kube-dns-ts' | 'CoreDNS';
interface Run {
  system: System;
  disruption: Disruption;
  disruptionMs: number;
  sent: number;
  lost: number;
  lookups: number;
  failedLookups: string[];
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

async function measure(c: NodeCluster, system: System, deployment: string, replicas: number, runs: Run[]): Promise<void> {
  for (const disruption of ['pod deleted', 'rollout restart'] as const) {
    for (let i = 0; i < RUNS; i++) {
      const r = await lossDuring(c, NS, CLIENT, { ...ISSUE_LOAD, seconds: SECONDS[disruption] }, dnsDeployment(deployment, replicas), disruption);
      console.log(`# ${system}, ${disruption} #${i + 1}: ${r.disruptionMs} ms; dnsperf sent ${r.sent}, lost ${r.lost}; lookups ${r.lookups}, failed ${r.failedLookups.length}`);
      runs.push({ system, disruption, disruptionMs: r.disruptionMs, sent: r.sent, lost: r.lost, lookups: r.lookups, failedLookups: r.failedLookups });
    }
  }
}

function report(runs: Run[], when: string, load: string): string {
  const cell = (system: System, disruption: Disruption, f: (r: Run) => number) =>
    runs.filter((r) => r.system === system && r.disruption === disruption).map(f).join(' / ');
  const rows: string[] = [];
  for (const disruption of ['pod deleted', 'rollout restart'] as const) {
    for (const system of ['kube-dns-ts', 'CoreDNS'] as const) {
      rows.push(`| ${disruption} | ${system} | ${cell(system, disruption, (r) => r.lost)} | ${cell(system, disruption, (r) => r.failedLookups.length)} | ${cell(system, disruption, (r) => Math.round(r.disruptionMs / 100) / 10)} |`);
    }
  }
  const failures = runs.flatMap((r) => r.failedLookups.map((f) => `- ${r.system}, ${r.disruption}: ${f}`));
  return `# Rolling the cluster DNS under load (${when})

${load}

| disruption | system | dnsperf lost, per run | new-socket lookups failed, per run | disruption (s), per run |
|---|---|---|---|---|
${rows.join('\n')}
${failures.length > 0 ? `\nFailed lookups:\n${failures.join('\n')}\n` : ''}`;
}

async function main(): Promise<void> {
  const missing = clusterMissing();
  if (missing !== null) throw new Error(`cannot run a cluster here: ${missing}`);
  const when = new Date().toISOString();
  const load = `${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${loadavg()[0].toFixed(2)}. One node (kube-proxy iptables), 2 replicas each: manifests/kube-dns.yaml as the README deploys it; CoreDNS ${COREDNS_IMAGE.split(':')[1]} as kubeadm deploys it (bench/coredns-kubeadm.yaml: lameduck 5s, readiness /ready every 10 s, maxUnavailable 1). In a client pod, through the ClusterIP: dnsperf -c ${ISSUE_LOAD.sockets} -Q ${ISSUE_LOAD.qps} -t ${ISSUE_LOAD.timeoutS} for ${SECONDS['pod deleted']} s (pod deleted) or ${SECONDS['rollout restart']} s (rollout restart), the disruption 3 s in; beside it dig +tries=1 +time=${ISSUE_LOAD.timeoutS}, a new process and socket per lookup, ${ISSUE_LOAD.lookupsPerSecond}/s. ${RUNS} runs each, in order.`;
  const scope = benchScope();
  const runs: Run[] = [];
  try {
    const c = await startNodeCluster(scope.t, { proxyMode: 'iptables', images: [COREDNS_IMAGE] });
    const replicas = (await deployAddon(c)).spec.replicas as number;
    await startClientPod(c, NS, CLIENT);
    await prepareLoad(c, NS, CLIENT);
    await measure(c, 'kube-dns-ts', 'kube-dns', replicas, runs);
    await measure(c, 'CoreDNS', 'coredns', await switchToCoreDns(c), runs);
  } finally {
    await scope.close();
  }
  writeResults('rollout', when, { load, runs }, report(runs, when, load));
}

await main();
