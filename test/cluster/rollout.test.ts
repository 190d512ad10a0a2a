// Operations on the addon while pods ask it (manifests/README.md, "Rollouts"): a deleted kube-dns pod
// turns unready at once and keeps answering for its lame duck, so the EndpointSlice marks it not
// serving and kube-proxy moves every flow pinned to it before it exits; a pod deleted and a rollout
// restart under dnsperf's load through the ClusterIP lose no lookup of a client that opens a new socket
// per lookup. dnsperf's own count (long-lived sockets) is printed; bench/rollout.ts sets it beside
// CoreDNS's.

import t from 'tap';
import type { Test } from 'tap';
import { clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import type { NodeCluster } from './harness/cluster.ts';
import { deployAddon, execIn, startClientPod, waitFor } from './harness/addon.ts';
import { dnsDeployment, ISSUE_LOAD, lossDuring, podsOf, prepareLoad } from './harness/rollout.ts';
import type { Disruption } from './harness/rollout.ts';

t.setTimeout(25 * 60_000);

const NS = 'default';
const CLIENT = 'client';

/** Whether the kube-dns EndpointSlices list `ip`, and its serving and terminating conditions. */
async function endpointOf(c: NodeCluster, ip: string): Promise<{ serving: boolean; terminating: boolean } | null> {
  const slices = await c.request('GET', `/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=kube-dns')}`);
  for (const slice of slices.body.items) {
    for (const e of slice.endpoints ?? []) if (e.addresses.includes(ip)) return { serving: e.conditions.serving, terminating: e.conditions.terminating };
  }
  return null;
}

async function lameDuck(t: Test, c: NodeCluster, replicas: number): Promise<void> {
  const [pod] = await podsOf(c);
  const ip = (await c.request('GET', `/api/v1/namespaces/kube-system/pods/${pod.name}`)).body.status.podIP as string;
  t.same(await endpointOf(c, ip), { serving: true, terminating: false }, 'serving before');
  const deleted = Date.now();
  await c.kubectl(['-n', 'kube-system', 'delete', 'pod', pod.name, '--wait=false']);
  await waitFor('the EndpointSlice marks the pod not serving', async () => (await endpointOf(c, ip))?.serving === false, 10_000);
  const unready = Date.now() - deleted;
  t.pass(`not serving ${unready} ms after the delete`);
  const answer = await execIn(c, NS, CLIENT, ['dig', `@${ip}`, '+tries=1', '+time=2', '+short', 'kubernetes.default.svc.cluster.local']);
  t.match(answer, /^\d+\.\d+\.\d+\.\d+$/m, `still answering at its pod IP ${Date.now() - deleted} ms after the delete`);
  await waitFor('the pod gone', async () => (await c.request('GET', `/api/v1/namespaces/kube-system/pods/${pod.name}`)).status === 404, 60_000);
  t.ok(Date.now() - deleted >= 5000, `gone ${Date.now() - deleted} ms after the delete, after its lame duck`);
  await waitFor('the Deployment whole again', async () => (await podsOf(c)).filter((p) => p.ready && !p.terminating).length === replicas, 120_000);
}

async function underLoad(t: Test, c: NodeCluster, replicas: number, what: Disruption, seconds: number): Promise<void> {
  const r = await lossDuring(c, NS, CLIENT, { ...ISSUE_LOAD, seconds }, dnsDeployment('kube-dns', replicas), what);
  t.comment(`${what} (${r.disruptionMs} ms) under ${ISSUE_LOAD.qps} queries/s over ${ISSUE_LOAD.sockets} sockets: dnsperf sent ${r.sent}, lost ${r.lost}; ${r.lookups} lookups from new sockets`);
  // A dig process per lookup falls behind its schedule on a loaded machine (seen: 341 of 450 in 45 s
  // in the CI run, none failed): what matters is that lookups kept coming through the disruption.
  t.ok(r.lookups >= seconds * ISSUE_LOAD.lookupsPerSecond * 0.6, `the lookup loop ran (${r.lookups} lookups)`);
  t.same(r.failedLookups, [], 'no lookup from a new socket failed');
  t.ok(r.sent >= seconds * ISSUE_LOAD.qps * 0.9, `dnsperf offered its load (${r.sent} queries)`);
}

t.test('rolling the addon under load', async (t) => {
  if (!clusterCanRun(t)) return;
  const c = await startNodeCluster(t, { proxyMode: 'iptables' });
  const replicas = (await deployAddon(c)).spec.replicas as number;
  await startClientPod(c, NS, CLIENT);
  await prepareLoad(c, NS, CLIENT);
  await t.test('SIGTERM: the pod is marked not serving at once and answers until kube-proxy has moved its flows', (t) => lameDuck(t, c, replicas));
  await t.test('a pod deleted under load', (t) => underLoad(t, c, replicas, 'pod deleted', 25));
  await t.test('a rollout restart under load', (t) => underLoad(t, c, replicas, 'rollout restart', 45));
});
