// npm run bench:node-local: what a rollout of the node-local cache costs the pods behind it, ours
// beside CoreDNS run as upstream's node-local cache, on one real single-node cluster (test/cluster/
// harness, kube-proxy iptables) in front of our addon. Ours: manifests/optional/node-local-dns.yaml as
// the README applies it. CoreDNS: upstream's Corefile rendered as node-cache renders it, in a
// DaemonSet of upstream's shape (host network, declared ports, maxUnavailable 10%, liveness on
// /health), the interface and rules made here beforehand with pkg/nodecache's own code (CoreDNS alone
// makes none). A client pod asks through its resolv.conf's 10.96.0.10, which the node-local cache
// holds: dnsperf at 1,000 queries/s over 20 sockets and 10 lookups/s from new sockets, while
// `kubectl rollout restart daemonset/...` runs, RUNS times each. Writes bench/results/node-local-rollout-<date>.{json,md}.

import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { clusterMissing, startNodeCluster } from '../test/cluster/harness/cluster.ts';
import type { NodeCluster } from '../test/cluster/harness/cluster.ts';
import { deployAddon, deployNodeLocalDns, describe, nodeLocalDaemonSet, startClientPod, waitFor } from '../test/cluster/harness/addon.ts';
import { ISSUE_LOAD, lossDuring, podsOf, prepareLoad } from '../test/cluster/harness/rollout.ts';
import type { Workload } from '../test/cluster/harness/rollout.ts';
import { NET } from '../test/cluster/harness/node-config.ts';
import { nodeLocalCorefile, README_VALUES } from '../test/e2e/harness/manifests.ts';
import { ensureLink, removeLink } from '../pkg/nodecache/interface.ts';
import { IptablesFirewall, nodeLocalRules } from '../pkg/nodecache/rules.ts';
import { benchScope, commitOf, writeResults } from './report.ts';
import { repoRoot } from './servers.ts';

const RUNS = Number(process.env.BENCH_ROLLOUT_RUNS ?? 5);
const SECONDS = 45;
const COREDNS_IMAGE = 'coredns/coredns:v1.15.0';
const NS = 'default';
const CLIENT = 'client';
const LOCAL = README_VALUES.localDns;

type System = 'kube-dns-ts node-cache' | 'CoreDNS (upstream node-local shape)';
interface Run {
  system: System;
  disruptionMs: number;
  sent: number;
  lost: number;
  lookups: number;
  failedLookups: string[];
}

const OURS: Workload = { kind: 'daemonset', name: 'node-local-dns', selector: 'k8s-app=node-local-dns', replicas: 1 };
const COREDNS: Workload = { kind: 'daemonset', name: 'coredns-node-local', selector: 'k8s-app=coredns-node-local', replicas: 1 };

/** Upstream's Corefile as node-cache renders it: our manifest's template with every pillar filled in. */
function coreDnsCorefile(clusterDns: string): string {
  return nodeLocalCorefile().replaceAll('__PILLAR__CLUSTER__DNS__', clusterDns).replaceAll('__PILLAR__UPSTREAM__SERVERS__', '/etc/resolv.conf');
}

/** Ours out (its rules and interface go with it), the rules made here, CoreDNS in as upstream's DaemonSet. */
async function switchToCoreDns(c: NodeCluster): Promise<() => Promise<void>> {
  await c.kubectl(['-n', 'kube-system', 'delete', 'daemonset', 'node-local-dns']);
  await waitFor('our node-cache gone', async () => (await podsOf(c, OURS.selector)).length === 0, 60_000);
  const ips = [LOCAL, NET.dnsServiceIp];
  await ensureLink('nodelocaldns', ips);
  const firewall = new IptablesFirewall(nodeLocalRules(ips, 53, 8080));
  await firewall.ensure();
  const clusterDns = (await c.request('GET', '/api/v1/namespaces/kube-system/services/kube-dns-upstream')).body.spec.clusterIP as string;
  await c.apply([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns-node-local', namespace: 'kube-system', labels: { 'k8s-app': 'coredns-node-local' } }, data: { Corefile: coreDnsCorefile(clusterDns) } },
    nodeLocalDaemonSet({
      name: 'coredns-node-local',
      image: COREDNS_IMAGE,
      args: ['-conf', '/etc/coredns/Corefile'],
      capabilities: ['NET_BIND_SERVICE'],
      volumeMounts: [{ name: 'config', mountPath: '/etc/coredns' }],
      volumes: [{ name: 'config', configMap: { name: 'coredns-node-local' } }],
    }),
  ]);
  await waitFor('CoreDNS node-local ready', async () => (await podsOf(c, COREDNS.selector)).some((p) => p.ready), 120_000, () => describe(c, 'kube-system'));
  return async () => {
    await firewall.remove();
    await removeLink('nodelocaldns');
  };
}

async function measure(c: NodeCluster, system: System, w: Workload, runs: Run[]): Promise<void> {
  for (let i = 0; i < RUNS; i++) {
    const r = await lossDuring(c, NS, CLIENT, { ...ISSUE_LOAD, seconds: SECONDS }, w, 'rollout restart');
    console.log(`# ${system} #${i + 1}: ${r.disruptionMs} ms; dnsperf sent ${r.sent}, lost ${r.lost}; lookups ${r.lookups}, failed ${r.failedLookups.length}`);
    runs.push({ system, disruptionMs: r.disruptionMs, sent: r.sent, lost: r.lost, lookups: r.lookups, failedLookups: r.failedLookups });
  }
}

function report(runs: Run[], when: string, setup: string): string {
  const systems = [...new Set(runs.map((r) => r.system))];
  const cell = (s: System, f: (r: Run) => number) => runs.filter((r) => r.system === s).map(f).join(' / ');
  const rows = systems.map((s) => `| ${s} | ${cell(s, (r) => r.lost)} | ${cell(s, (r) => r.failedLookups.length)} | ${cell(s, (r) => Math.round(r.disruptionMs / 100) / 10)} |`);
  const failures = runs.flatMap((r) => r.failedLookups.slice(0, 5).map((f) => `- ${r.system}: ${f}`));
  return `# Rolling the node-local cache under load (${when})

${setup}

| system | dnsperf lost, per run | new-socket lookups failed, per run | rollout (s), per run |
|---|---|---|---|
${rows.join('\n')}
${failures.length > 0 ? `\nFailed lookups (at most 5 a run):\n${failures.join('\n')}\n` : ''}`;
}

async function main(): Promise<void> {
  const missing = clusterMissing();
  if (missing !== null) throw new Error(`cannot run a cluster here: ${missing}`);
  const when = new Date().toISOString();
  const setup = `${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${loadavg()[0].toFixed(2)}. One node (kube-proxy iptables), our addon (2 replicas) behind the node-local cache; ours: manifests/optional/node-local-dns.yaml (maxSurge 1, maxUnavailable 0); CoreDNS ${COREDNS_IMAGE.split(':')[1]} with upstream's Corefile and DaemonSet shape (maxUnavailable 10%), the interface and NOTRACK rules made beforehand as node-cache makes them. In a client pod, through 10.96.0.10 (held by the node-local cache): dnsperf -c ${ISSUE_LOAD.sockets} -Q ${ISSUE_LOAD.qps} -t ${ISSUE_LOAD.timeoutS} for ${SECONDS} s, \`kubectl rollout restart daemonset\` 3 s in; beside it dig +tries=1 +time=${ISSUE_LOAD.timeoutS}, a new process and socket per lookup, ${ISSUE_LOAD.lookupsPerSecond}/s. ${RUNS} runs each.`;
  const scope = benchScope();
  const runs: Run[] = [];
  let undo: (() => Promise<void>) | null = null;
  try {
    const c = await startNodeCluster(scope.t, { proxyMode: 'iptables', images: [COREDNS_IMAGE] });
    await deployAddon(c);
    await deployNodeLocalDns(c);
    await startClientPod(c, NS, CLIENT);
    await prepareLoad(c, NS, CLIENT);
    await measure(c, 'kube-dns-ts node-cache', OURS, runs);
    undo = await switchToCoreDns(c);
    await measure(c, 'CoreDNS (upstream node-local shape)', COREDNS, runs);
  } finally {
    await undo?.();
    await scope.close();
  }
  writeResults('node-local-rollout', when, { setup, runs }, report(runs, when, setup));
}

await main();
