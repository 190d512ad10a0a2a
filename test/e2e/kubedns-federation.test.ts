// Federation queries against a real kube-apiserver: kube-dns started with --federations and the kube-dns
// token (bound by manifests/rbac.yaml, whose Nodes rule serves federations and autopath) answers `<svc>.<ns>.<fed>.svc.<zone>` with a CNAME to the local service while it
// has endpoints, else into the federation's domain by the zone and region labels of a Node. Run with
// --autopath=false: autopath watches Nodes from the start, and these tests are of federations' own.

import t from 'tap';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { answers, dig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import type { KubeDns } from '../helpers/kubedns.ts';

const WAIT = 20_000;

const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'app' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
const slice = (service: string, ip: string) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${service}-1`, namespace: 'app', labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'e2e' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
});
const node = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });

/** dig until the answer is `want` (a CNAME target, or NXDOMAIN); returns the last reply. */
async function cname(kd: KubeDns, name: string, want: string, type = 'CNAME'): Promise<DigResult> {
  let last: DigResult | null = null;
  await eventually(async () => {
    last = await dig(kd.dnsPort, name, type);
    if (want === 'NXDOMAIN') return last.status === 'NXDOMAIN';
    return last.status === 'NOERROR' && answers(last, 'CNAME')[0] === want;
  }, `${name} ${type} → ${want} (last: ${last === null ? '' : `${(last as DigResult).status} ${answers(last as DigResult).join(',')}`})`, WAIT);
  return last!;
}

t.test('federation queries on a real API server', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } },
    node('node-a', { 'kubernetes.io/hostname': 'node-a' }),
    node('node-b', { 'topology.kubernetes.io/zone': 'eu-west-1b', 'topology.kubernetes.io/region': 'eu-west-1' }),
    svc('web'),
    slice('web', '10.1.0.1'),
    svc('lonely'),
  ]);
  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--federations=myfed=example.com', '--autopath=false'] });
  t.match(kd.program.output(), /watching=".*Nodes \(federations\)"/, 'Nodes are listed and watched because federations are configured');
  t.notMatch(kd.program.output(), /forbidden/i, 'the shipped RBAC lets the kube-dns identity list and watch Nodes');

  const web = (await cluster.request('GET', '/api/v1/namespaces/app/services/web')).body;
  const local = await cname(kd, 'web.app.myfed.svc.cluster.local', 'web.app.svc.cluster.local.');
  t.equal(local.answer[0].ttl, 0, 'TTL 0, as the original');
  const a = await dig(kd.dnsPort, 'web.app.myfed.svc.cluster.local', 'A');
  t.same(answers(a, 'CNAME'), ['web.app.svc.cluster.local.'], 'A: the CNAME first');
  t.same(answers(a, 'A'), [web.spec.clusterIP], 'then the local service, chased in the zone');

  await cname(kd, 'lonely.app.myfed.svc.cluster.local', 'lonely.app.myfed.svc.eu-west-1b.eu-west-1.example.com.');
  const plain = await dig(kd.dnsPort, 'web.app.svc.cluster.local', 'A');
  t.same(answers(plain, 'A'), [web.spec.clusterIP], 'the local name is unchanged');
  t.equal((await dig(kd.dnsPort, 'web.app.otherfed.svc.cluster.local', 'A')).status, 'NXDOMAIN', 'an unknown federation name is an ordinary (missing) name');

  t.test('the answer follows endpoints and nodes', async (t) => {
    await cluster.apply([slice('lonely', '10.1.0.2')]);
    await cname(kd, 'lonely.app.myfed.svc.cluster.local', 'lonely.app.svc.cluster.local.');
    await cluster.apply([svc('gone')]);
    await cname(kd, 'gone.app.myfed.svc.cluster.local', 'gone.app.myfed.svc.eu-west-1b.eu-west-1.example.com.');
    await cluster.apply([node('node-c', { 'failure-domain.beta.kubernetes.io/zone': 'old-z', 'failure-domain.beta.kubernetes.io/region': 'old-r' })]);
    const del = await cluster.request('DELETE', '/api/v1/nodes/node-b');
    t.equal(del.status, 200, 'node-b deleted');
    await cname(kd, 'gone.app.myfed.svc.cluster.local', 'gone.app.myfed.svc.old-z.old-r.example.com.');
    t.equal((await cluster.request('DELETE', '/api/v1/nodes/node-c')).status, 200, 'node-c deleted');
    await cname(kd, 'gone.app.myfed.svc.cluster.local', 'NXDOMAIN');
  });
});

t.test('federations from the ConfigMap (no flag): the Node watch starts when they appear', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' }, data });
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } },
    node('node-z', { 'topology.kubernetes.io/zone': 'z1', 'topology.kubernetes.io/region': 'r1' }),
    svc('lonely'),
    configMap({}),
  ]);
  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--config-map=kube-dns', '--autopath=false'] });
  t.notMatch(kd.program.output(), /Nodes \(federations\)/, 'no federations yet: Nodes are not watched');
  t.equal((await dig(kd.dnsPort, 'lonely.app.cmfed.svc.cluster.local', 'CNAME')).status, 'NXDOMAIN', 'not a federation yet');
  await cluster.apply([configMap({ federations: 'cmfed=federation.example' })]);
  await kd.program.waitFor(/watching Nodes \(federations\) too/, WAIT);
  await cname(kd, 'lonely.app.cmfed.svc.cluster.local', 'lonely.app.cmfed.svc.z1.r1.federation.example.');
});

t.test("federations at start-up with an RBAC that grants no Nodes (the original's): ready all the same, the Node list refused and logged", async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  await cluster.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } }, svc('web'), slice('web', '10.1.0.1')]);
  const rolePath = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:kube-dns';
  const role = (await cluster.request('GET', rolePath)).body;
  role.rules = role.rules.filter((r: { resources: string[] }) => !r.resources.includes('nodes'));
  t.equal((await cluster.request('PUT', rolePath, role)).status, 200, "manifests/rbac.yaml's Nodes rule taken out");
  await eventually(async () => (await cluster.request('GET', '/api/v1/nodes', undefined, cluster.kubeDnsToken)).status === 403, 'Nodes refused to kube-dns', WAIT);
  const kd = await startKubeDns(t, { synced: false, args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--federations=myfed=example.com'] });
  await kd.program.waitFor(/cannot list\/watch Node.*status=403/, WAIT);
  await kd.program.waitFor(/initial sync done/, WAIT);
  t.equal((await fetch(`http://127.0.0.1:${kd.httpPort}/readiness`)).status, 200, 'ready: Nodes are optional');
  await cname(kd, 'web.app.myfed.svc.cluster.local', 'web.app.svc.cluster.local.');
});
