// NodeLocal DNSCache with our node-cache on a real node (manifests/optional/node-local-dns.yaml, the
// README's values), in front of the addon: pods answered through 169.254.20.10 and through the kube-dns
// ClusterIP that node-cache holds (their resolv.conf unchanged), in both kube-proxy modes; in nftables
// mode from upstream's own DaemonSet with only the image changed (the drop-in). In iptables
// mode also: kube-dns gone for 60 s (names asked before answered stale, others SERVFAIL at once, fresh
// answers once it is back), and no query lost by a pod under load while kube-dns rolls behind node-cache
// or while node-cache's own DaemonSet rolls (a surge: the new pod serves beside the old one).

import t from 'tap';
import type { Test } from 'tap';
import { parseDig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { parseSamples } from '../helpers/sidecar.ts';
import { clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import type { NodeCluster } from './harness/cluster.ts';
import { deployAddon, deployNodeLocalDns, execIn, startClientPod, upstreamNodeLocalDaemonSet, waitFor } from './harness/addon.ts';
import { NET } from './harness/node-config.ts';
import type { ProxyMode } from './harness/node-config.ts';
import { dnsDeployment, ISSUE_LOAD, lossDuring, podsOf, prepareLoad, prepareMissLoad } from './harness/rollout.ts';
import type { Workload } from './harness/rollout.ts';
import { only, readManifest, README_VALUES } from '../e2e/harness/manifests.ts';

t.setTimeout(25 * 60_000);

const NS = 'default';
const CLIENT = 'client';
const LOCAL = README_VALUES.localDns;
const NODE_CACHE: Workload = { kind: 'daemonset', name: 'node-local-dns', selector: 'k8s-app=node-local-dns', replicas: 1 };

/** The node-cache image our manifest names. */
const ourImage = () => only(readManifest('optional/node-local-dns.yaml', README_VALUES), 'DaemonSet').spec.template.spec.containers[0].image as string;

async function dig(c: NodeCluster, args: string[]): Promise<DigResult> {
  return parseDig(await execIn(c, NS, CLIENT, ['dig', '+tries=1', '+time=2', ...args]));
}
const addresses = (r: DigResult) => r.answer.filter((a) => a.type === 'A').map((a) => a.data).sort();

/** node-cache's metric `name` on the node's address (host network), summed over its series for the cluster zone (one per local address). */
async function nodeCacheMetric(name: string): Promise<number> {
  const samples = parseSamples(await (await fetch(`http://${NET.nodeIp}:9253/metrics`)).text());
  let sum = 0;
  for (const [series, value] of samples) if (series.startsWith(`${name}{`) && series.includes('zones="cluster.local."')) sum += value;
  return sum;
}

async function answers(t: Test, c: NodeCluster): Promise<void> {
  const web = (await c.request('GET', '/api/v1/namespaces/default/services/kubernetes')).body.spec.clusterIP as string;
  t.same(addresses(await dig(c, [`@${LOCAL}`, 'kubernetes.default.svc.cluster.local'])), [web], `through ${LOCAL}`);
  t.same(addresses(await dig(c, [`@${LOCAL}`, '+tcp', 'kubernetes.default.svc.cluster.local'])), [web], `through ${LOCAL} over TCP`);
  t.same(addresses(await dig(c, [`@${LOCAL}`, 'outside.example'])), ['192.0.2.10'], "a name of the world, through the node's resolver");
  const misses = 'coredns_cache_misses_total';
  const before = await nodeCacheMetric(misses);
  const viaResolvConf = await dig(c, ['kube-dns.kube-system.svc.cluster.local']);
  t.same(addresses(viaResolvConf), [NET.dnsServiceIp], "through the pod's resolv.conf (the kube-dns ClusterIP)");
  t.ok((await nodeCacheMetric(misses)) > before, 'which node-cache answered (its cache counted the miss)');
  t.match(await (await fetch(`http://${NET.nodeIp}:9353/metrics`)).text(), /coredns_nodecache_setup_errors_total\{errortype="iptables"\} 0/, 'its rules are set up');
}

/** kube-dns scaled to 0 for 60 s, then back. */
async function outage(t: Test, c: NodeCluster, replicas: number): Promise<void> {
  const asked = 'kubernetes.default.svc.cluster.local';
  t.equal(addresses(await dig(c, [`@${LOCAL}`, asked])).length, 1, 'asked once before the outage');
  await c.kubectl(['-n', 'kube-system', 'scale', 'deployment/kube-dns', '--replicas=0']);
  await waitFor('kube-dns gone', async () => (await podsOf(c)).length === 0, 60_000);
  const gone = Date.now();
  const staleBefore = await nodeCacheMetric('coredns_cache_served_stale_total');
  let stale = 0;
  while (Date.now() - gone < 60_000) {
    const r = await dig(c, [`@${LOCAL}`, asked]);
    t.equal(r.status, 'NOERROR', `${Math.round((Date.now() - gone) / 1000)} s into the outage: ${asked} answered`);
    if (r.answer[0]?.ttl === 30 && Date.now() - gone > 31_000) stale++;
    await new Promise((res) => setTimeout(res, 5000));
  }
  t.ok(stale > 0, 'answered stale (TTL 30) once its cached TTL ran out');
  t.ok((await nodeCacheMetric('coredns_cache_served_stale_total')) > staleBefore, 'counted in coredns_cache_served_stale_total');
  const started = Date.now();
  const never = await dig(c, [`@${LOCAL}`, 'never-asked.default.svc.cluster.local']);
  t.same([never.status, Date.now() - started < 2000], ['SERVFAIL', true], `a name never asked: SERVFAIL in ${Date.now() - started} ms, before the client's timeout`);
  await c.apply([{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'after-outage', namespace: NS }, spec: { ports: [{ port: 80 }] } }]);
  await c.kubectl(['-n', 'kube-system', 'scale', 'deployment/kube-dns', `--replicas=${replicas}`]);
  await waitFor('kube-dns back', async () => (await podsOf(c)).filter((p) => p.ready).length === replicas, 120_000);
  // Ready pods reach kube-proxy's rules a sync later.
  await waitFor('a Service made during the outage answered through node-cache', async () => addresses(await dig(c, [`@${LOCAL}`, 'after-outage.default.svc.cluster.local'])).length === 1, 10_000);
  t.pass('kube-dns back: a Service made during the outage answers');
}

/**
 * `maxLost`: node-cache's own rollout hands the addresses from one pod to the next through
 * SO_REUSEPORT, and the kernel drops what still waits in the old pod's socket queue when it closes:
 * at most a datagram per socket, rarely (0 or 1 of 45,000 here). Two pods cannot share one socket
 * as the nanny's children do (pkg/nanny): nothing in Node passes a socket between unrelated processes.
 */
async function underLoad(t: Test, c: NodeCluster, w: Workload, seconds: number, maxLost = 0): Promise<void> {
  const r = await lossDuring(c, NS, CLIENT, { ...ISSUE_LOAD, seconds }, w, 'rollout restart');
  t.comment(`${w.name} rollout restart (${r.disruptionMs} ms) behind node-cache: dnsperf sent ${r.sent}, lost ${r.lost}; ${r.lookups} lookups from new sockets`);
  t.ok(r.sent >= seconds * ISSUE_LOAD.qps * 0.9, `dnsperf offered its load (${r.sent} queries)`);
  t.ok(r.lost <= maxLost, `dnsperf (long-lived sockets): ${r.lost} lost, at most ${maxLost}`);
  t.same(r.failedLookups, [], 'no lookup from a new socket failed');
}

for (const mode of ['iptables', 'nftables'] as ProxyMode[]) {
  // nftables mode runs upstream's own DaemonSet with our image in it: the drop-in.
  const what = mode === 'iptables' ? 'manifests/optional/node-local-dns.yaml' : "upstream's nodelocaldns DaemonSet with our image";
  t.test(`node-cache in front of the addon (${what}), kube-proxy ${mode}`, async (t) => {
    if (!clusterCanRun(t)) return;
    const c = await startNodeCluster(t, { proxyMode: mode });
    const replicas = (await deployAddon(c)).spec.replicas as number;
    await deployNodeLocalDns(c, mode === 'iptables' ? undefined : upstreamNodeLocalDaemonSet(ourImage()));
    await startClientPod(c, NS, CLIENT);
    await t.test('pods answered through the link-local address and the kube-dns ClusterIP', (t) => answers(t, c));
    if (mode !== 'iptables') return;
    // Names no cache holds: every query goes on to kube-dns (over TCP) while its pods roll.
    await prepareMissLoad(c, NS, CLIENT);
    await t.test('kube-dns rolled behind node-cache under load, every query a miss: nothing lost', (t) => underLoad(t, c, dnsDeployment('kube-dns', replicas), 45));
    await prepareLoad(c, NS, CLIENT);
    await t.test("node-cache's own DaemonSet rolled under load: at most one datagram lost, per socket closed", (t) => underLoad(t, c, NODE_CACHE, 45, 2));
    await t.test('kube-dns gone for 60 s: stale answers, fast failures, fresh ones after', (t) => outage(t, c, replicas));
  });
}
