// The pod address index autopath reads a client's namespace from, and the Pod trim that feeds it.

import t from 'tap';
import { PodIndex, hash32, ipv4Number } from '../../pkg/autopath/pod-index.ts';
import { firstCandidate } from '../../pkg/autopath/search.ts';
import { trimPod } from '../../pkg/autopath/trim.ts';
import type { KubeObject } from '../../pkg/source/source.ts';

const ip = (s: string) => ipv4Number(s);
const addr = (i: number) => ip(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);

t.test('ipv4Number reads dotted quads only', async (t) => {
  t.equal(ip('10.0.0.1'), 0x0a000001);
  t.equal(ip('255.255.255.255'), 0xffffffff);
  for (const bad of ['0.0.0.0', '10.0.0', '10.0.0.1.2', '10.0.0.256', '10.0.0.1234', 'fd00::1', '10..0.1', '', '10.0.0.a']) t.equal(ip(bad), -1, bad);
});

t.test('an address maps to its pod namespace; a delete removes only the pod that is there', async (t) => {
  const idx = new PodIndex();
  idx.set(ip('10.0.0.1'), 'default', hash32('uid-a'));
  idx.set(ip('10.0.0.2'), 'prod', hash32('uid-b'));
  t.equal(idx.namespaceOf(ip('10.0.0.1')), 'default');
  t.equal(idx.namespaceOf(ip('10.0.0.2')), 'prod');
  t.equal(idx.namespaceOf(ip('10.0.0.3')), undefined);
  // Pod a left, pod c (another namespace) took its address, and a's delete came last.
  idx.remove(ip('10.0.0.1'), hash32('uid-a'));
  idx.set(ip('10.0.0.1'), 'staging', hash32('uid-c'));
  idx.remove(ip('10.0.0.1'), hash32('uid-a'));
  t.equal(idx.namespaceOf(ip('10.0.0.1')), 'staging', "the old pod's late delete leaves the new pod");
  idx.remove(ip('10.0.0.1'), hash32('uid-c'));
  t.equal(idx.namespaceOf(ip('10.0.0.1')), undefined);
  t.equal(idx.size, 1);
});

t.test('two pods of different namespaces on one address: unknown, until a relist settles it', async (t) => {
  const idx = new PodIndex();
  idx.set(ip('10.0.0.1'), 'default', hash32('uid-a'));
  idx.set(ip('10.0.0.1'), 'default', hash32('uid-a'));
  t.equal(idx.namespaceOf(ip('10.0.0.1')), 'default', 'an update of the same pod');
  idx.set(ip('10.0.0.1'), 'prod', hash32('uid-b')); // the new pod's add before the old one's delete
  t.equal(idx.namespaceOf(ip('10.0.0.1')), undefined, 'ambiguous: answered as today');
  idx.set(ip('10.0.0.1'), 'prod', hash32('uid-b'));
  t.equal(idx.namespaceOf(ip('10.0.0.1')), undefined, 'stays ambiguous on the next update');
  idx.beginRelist();
  idx.set(ip('10.0.0.1'), 'prod', hash32('uid-b'));
  idx.endRelist();
  t.equal(idx.namespaceOf(ip('10.0.0.1')), 'prod', 'the list is the whole truth');
});

t.test('a relist drops the pods it did not name; one cut short and started again does not lose pods', async (t) => {
  const idx = new PodIndex();
  for (let i = 1; i <= 100; i++) idx.set(addr(i), `ns-${i % 7}`, hash32(`uid-${i}`));
  idx.beginRelist();
  for (let i = 1; i <= 30; i++) idx.set(addr(i), `ns-${i % 7}`, hash32(`uid-${i}`));
  idx.beginRelist(); // the list failed half way and started again
  for (let i = 1; i <= 100; i += 2) idx.set(addr(i), `ns-${i % 7}`, hash32(`uid-${i}`));
  idx.endRelist();
  const kept = [];
  for (let i = 1; i <= 100; i++) if (idx.namespaceOf(addr(i)) !== undefined) kept.push(i);
  t.same(kept.filter((i) => i % 2 === 1).length, 50, 'every pod of the list is kept');
  t.same(kept.filter((i) => i % 2 === 0 && i > 30), [], 'what neither attempt listed is gone');
});

t.test('grows and shrinks without losing an entry (100,000 pods, half of them deleted)', async (t) => {
  const idx = new PodIndex();
  const n = 100_000;
  for (let i = 1; i <= n; i++) idx.set(addr(i), `ns-${i % 500}`, hash32(`uid-${i}`));
  t.equal(idx.size, n);
  for (let i = 1; i <= n; i += 2) idx.remove(addr(i), hash32(`uid-${i}`));
  let right = 0;
  let gone = 0;
  for (let i = 1; i <= n; i++) {
    const ns = idx.namespaceOf(addr(i));
    if (i % 2 === 0 && ns === `ns-${i % 500}`) right++;
    if (i % 2 === 1 && ns === undefined) gone++;
  }
  t.equal(right, n / 2);
  t.equal(gone, n / 2);
});

const pod = (o: { spec?: object; status?: object; uid?: string }): KubeObject => ({
  metadata: { name: 'web-1', namespace: 'shop', ...(o.uid ? { uid: o.uid } : {}) },
  spec: o.spec ?? {},
  status: o.status ?? { phase: 'Running', podIP: '10.1.2.3' },
});

t.test('trimPod: the IPv4 address and whether the pod walks the kubelet search list', async (t) => {
  t.match(trimPod(pod({ uid: 'u1' })), { ip: ip('10.1.2.3'), namespace: 'shop', owner: hash32('u1'), eligible: true });
  t.match(trimPod(pod({})), { owner: hash32('shop/web-1') }, 'no uid (a cluster file): namespace/name');
  t.match(trimPod(pod({ status: { phase: 'Running', podIPs: [{ ip: 'fd00::3' }, { ip: '10.9.9.9' }] } })), { ip: ip('10.9.9.9') }, 'dual-stack: the IPv4 one');
  t.equal(trimPod(pod({ status: { phase: 'Pending' } })), null, 'no address yet');
  t.equal(trimPod(pod({ status: { podIPs: [{ ip: 'fd00::3' }] } })), null, 'IPv6 only');
  t.equal(trimPod({ metadata: { name: 'x' }, spec: 'junk', status: 7 } as unknown as KubeObject), null, 'junk');
  for (const [why, o] of [
    ['host network', { spec: { hostNetwork: true } }],
    ['dnsPolicy Default', { spec: { dnsPolicy: 'Default' } }],
    ['dnsPolicy None', { spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'] } } }],
    ['own searches', { spec: { dnsConfig: { searches: ['corp.example'] } } }],
    ['own ndots', { spec: { dnsConfig: { options: [{ name: 'ndots', value: '2' }] } } }],
    ['finished', { status: { phase: 'Succeeded', podIP: '10.1.2.3' } }],
  ] as const) {
    t.match(trimPod(pod(o)), { eligible: false }, why);
  }
  t.match(trimPod(pod({ spec: { dnsPolicy: 'ClusterFirst', dnsConfig: {} } })), { eligible: true }, 'ClusterFirst with an empty dnsConfig');
});

t.test('firstCandidate: <name>.<ns>.svc.<zone> and nothing else', async (t) => {
  const zone = 'cluster.local';
  t.same(firstCandidate('api.example.com.apps.svc.cluster.local', zone), { name: 'api.example.com', namespace: 'apps' });
  t.same(firstCandidate('db.default.apps.svc.cluster.local', zone), { name: 'db.default', namespace: 'apps' });
  for (const other of ['apps.svc.cluster.local', '.apps.svc.cluster.local', 'db.apps.svc.xcluster.local', 'db.apps.xsvc.cluster.local', 'db.apps.svc.cluster.locals', 'db.apps.cluster.local', 'cluster.local', 'svc.cluster.local']) {
    t.equal(firstCandidate(other, zone), null, other);
  }
});

t.test("a pod whose resolver does not walk the kubelet's list: known for its namespace, not to autopath", async (t) => {
  const idx = new PodIndex();
  idx.set(ip('10.0.0.1'), 'default', hash32('uid-a'), false);
  idx.set(ip('10.0.0.2'), 'default', hash32('uid-b'));
  t.equal(idx.namespaceOf(ip('10.0.0.1')), 'default', 'its namespace (visibility, pods verified)');
  t.equal(idx.walkerNamespaceOf(ip('10.0.0.1')), undefined, 'not a walker (autopath)');
  t.equal(idx.walkerNamespaceOf(ip('10.0.0.2')), 'default');
  idx.set(ip('10.0.0.1'), 'default', hash32('uid-a'), true);
  t.equal(idx.walkerNamespaceOf(ip('10.0.0.1')), 'default', 'an update that makes it one');
  t.match(trimPod({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n', uid: 'u' }, spec: { dnsPolicy: 'None' }, status: { podIP: '10.0.0.9' } }), { indexed: true, eligible: false });
  t.match(trimPod({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n', uid: 'u' }, spec: { hostNetwork: true }, status: { podIP: '10.0.0.9' } }), { indexed: false, eligible: false }, "on the host's network: its address is the node's");
});
