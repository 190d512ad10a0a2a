// Tenants on a real node (kube-proxy in iptables mode): the addon and node-cache as the manifests
// deploy them, the kube-dns ConfigMap given a `visibility` policy by an edit, as an operator would.
// A pod of team-a resolves its own namespace's Service and the shared ones but not team-b's, through
// the kube-dns ClusterIP (the pods' dnscache names it to kube-dns), and through node-cache once it is
// deployed; team-b's pod resolves its own after team-a asked, through the same
// caches. Then a pod floods never-existing names and is named in the DNS pods' logs while another
// pod's lookups keep answering.

import t from 'tap';
import type { Test } from 'tap';
import { parseDig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import type { NodeCluster } from './harness/cluster.ts';
import { deployAddon, deployNodeLocalDns, execIn, startClientPod, waitFor } from './harness/addon.ts';
import { NET } from './harness/node-config.ts';
import { README_VALUES } from '../e2e/harness/manifests.ts';

t.setTimeout(15 * 60_000);

const LOCAL = README_VALUES.localDns;
const POLICY = '{"unknownAskers": "allow"}';

async function dig(c: NodeCluster, ns: string, args: string[]): Promise<DigResult> {
  return parseDig(await execIn(c, ns, 'client', ['dig', '+tries=1', '+time=2', ...args]));
}

async function service(c: NodeCluster, ns: string): Promise<string> {
  await c.apply([{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: ns }, spec: { ports: [{ port: 80 }] } }]);
  return (await c.request('GET', `/api/v1/namespaces/${ns}/services/api`)).body.spec.clusterIP as string;
}

t.test('visibility and fair shares on a real node', async (t) => {
  if (!clusterCanRun(t)) return;
  const c = await startNodeCluster(t, { proxyMode: 'iptables' });
  await deployAddon(c);
  for (const ns of ['team-a', 'team-b']) await startClientPod(c, ns, 'client');
  const [, teamB] = [await service(c, 'team-a'), await service(c, 'team-b')];
  const hidden = 'api.team-b.svc.cluster.local';
  t.equal((await dig(c, 'team-a', [hidden])).status, 'NOERROR', 'before the policy: every pod sees every name');

  // The operator's edit: the kubelet syncs the ConfigMap volume, kube-dns reads it (--config-dir).
  const cm = (await c.request('GET', '/api/v1/namespaces/kube-system/configmaps/kube-dns')).body;
  await c.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system', labels: cm.metadata.labels }, data: { ...cm.data, visibility: POLICY } }]);
  const edited = Date.now();
  const explain = async () => {
    const logs = await c.kubectl(['-n', 'kube-system', 'logs', '-l', 'k8s-app=kube-dns', '-c', 'kubedns', '--tail=-1']);
    const pod = (await c.request('GET', '/api/v1/namespaces/team-a/pods/client')).body.status;
    const kubeDnsIp = (await c.request('GET', '/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns')).body.items[0]?.status.podIP;
    const direct = await dig(c, 'team-a', [`@${kubeDnsIp}`, '-p', '10053', hidden]);
    return `kube-dns: ${logs.split('\n').filter((l) => /config|visibility|polic/i.test(l)).join('\n')}\nteam-a pod hostIP ${pod.hostIP} podIP ${pod.podIP}; asked of kube-dns directly: ${direct.status}`;
  };
  // In force on every replica: each reads its own ConfigMap volume, which the kubelet syncs pod by pod
  // (asked through the ClusterIP, the first replica to read it would pass for both).
  const replicas = async () => ((await c.request('GET', '/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns')).body.items as { status: { podIP: string } }[]).map((p) => p.status.podIP);
  await waitFor('the policy in force on every kube-dns replica', async () => {
    const denied = await Promise.all((await replicas()).map(async (ip) => (await dig(c, 'team-a', [`@${ip}`, hidden])).status === 'NXDOMAIN'));
    return denied.length > 0 && denied.every(Boolean);
  }, 150_000, explain);
  t.comment(`in force ${Math.round((Date.now() - edited) / 1000)} s after the edit (the kubelet's volume sync, then --config-period)`);

  const checks = async (t: Test, via: string[], path: string) => {
    t.equal((await dig(c, 'team-a', [...via, 'api.team-a.svc.cluster.local'])).status, 'NOERROR', `${path}: its own Service`);
    t.equal((await dig(c, 'team-a', [...via, 'kubernetes.default.svc.cluster.local'])).status, 'NOERROR', `${path}: the API server, shared`);
    t.equal((await dig(c, 'team-a', [...via, 'kube-dns.kube-system.svc.cluster.local'])).status, 'NOERROR', `${path}: kube-dns, shared`);
    const denied = await dig(c, 'team-a', [...via, hidden]);
    const missing = await dig(c, 'team-a', [...via, 'nothing.team-b.svc.cluster.local']);
    t.same([denied.status, denied.authority.map((r) => r.type)], [missing.status, missing.authority.map((r) => r.type)], `${path}: team-b's Service reads as a name that does not exist`);
    t.equal((await dig(c, 'team-a', [...via, '-x', teamB])).answer.length, 0, `${path}: nor is its address named`);
    t.equal((await dig(c, 'team-b', [...via, hidden])).status, 'NOERROR', `${path}: team-b's pod sees it, after team-a asked through the same caches`);
    t.match((await dig(c, 'team-b', [...via, '-x', teamB])).answer[0]?.data, /^api\.team-b\.svc\.cluster\.local\.$/, `${path}: and its address`);
  };
  await t.test("team-a's pod through the kube-dns ClusterIP (the pods' dnscache names it): its own and the shared names, not team-b's", (t) => checks(t, [], 'the ClusterIP'));
  await deployNodeLocalDns(c);
  // kube-proxy masquerades the host's traffic to a ClusterIP (its source is not in the pod range):
  // node-cache's queries reach kube-dns from the CNI bridge's address, the gateway of the node's
  // spec.podCIDR, which kube-dns learns from the Node watch.
  await t.test("team-a's pod through node-cache", (t) => checks(t, [`@${LOCAL}`], 'node-cache'));

  await t.test('a pod flooding never-existing names is named in the logs; another pod keeps getting answers', async (t) => {
    await execIn(c, 'team-a', 'client', ['sh', '-c', "seq 1 400000 | sed 's/.*/flood&.team-a.svc.cluster.local A/' > /tmp/flood"]);
    const flooderIp = (await c.request('GET', '/api/v1/namespaces/team-a/pods/client')).body.status.podIP as string;
    const flood = execIn(c, 'team-a', 'client', ['dnsperf', '-s', NET.dnsServiceIp, '-d', '/tmp/flood', '-c', '20', '-q', '2000', '-l', '25', '-t', '1'], 60_000);
    await new Promise((r) => setTimeout(r, 5000));
    const loop = await execIn(c, 'team-b', 'client', ['bash', '-c', 'for i in $(seq 1 40); do dig +tries=2 +time=2 +short api.team-b.svc.cluster.local | grep -q . && echo ok || echo fail; sleep 0.25; done'], 90_000);
    await flood;
    const oks = loop.split('\n').filter((l) => l === 'ok').length;
    t.equal(oks, 40, `the other pod's 40 lookups during the flood answered (${oks})`);
    // The ClusterIP is node-cache's on this node (iptables mode): it meets the flood first, kube-dns behind it.
    const logs = (await Promise.all(['k8s-app=node-local-dns', 'k8s-app=kube-dns'].map((l) => c.kubectl(['-n', 'kube-system', 'logs', '-l', l, '--all-containers', '--tail=-1', '--prefix'])))).join('\n');
    const named = logs.split('\n').filter((l) => l.includes('asker limited') && l.includes(flooderIp));
    t.ok(named.length > 0, `the flooder (${flooderIp}) named in a DNS pod's log`);
    t.comment(named.slice(0, 3).join('\n'));
  });
});
