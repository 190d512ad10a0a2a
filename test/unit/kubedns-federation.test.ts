// Federation queries: which names are federation queries, and what they answer (pkg/kubedns/federation.ts),
// plus the Node topology the store keeps for them (pkg/cluster trimNode, ClusterStore.topology).

import t from 'tap';
import { federationAnswer, federationQuery } from '../../pkg/kubedns/federation.ts';
import { ClusterStore } from '../../pkg/cluster/store.ts';
import { CLUSTER_KINDS } from '../../pkg/cluster/kinds.ts';
import { parseClusterFile } from '../../pkg/source/file-parse.ts';

const feds = new Map([['myfed', 'example.com']]);

t.test('federationQuery: <svc>.<ns>.<fed>.svc with a configured federation only', async (t) => {
  t.same(federationQuery(['web', 'app', 'myfed', 'svc'], feds), { service: 'web', namespace: 'app', federation: 'myfed', domain: 'example.com' });
  t.equal(federationQuery(['web', 'app', 'other', 'svc'], feds), null, 'not a configured federation: a normal name');
  t.equal(federationQuery(['app', 'myfed', 'svc'], feds), null, 'too short');
  t.equal(federationQuery(['x', 'web', 'app', 'myfed', 'svc'], feds), null, 'too long');
  t.equal(federationQuery(['web', 'app', 'myfed', 'pod'], feds), null, 'not under svc');
  t.equal(federationQuery(['1web', 'app', 'myfed', 'svc'], feds), null, 'service name must be an RFC 1035 label');
  t.equal(federationQuery(['web', '-app', 'myfed', 'svc'], feds), null, 'namespace must be a DNS-1123 label');
  t.equal(federationQuery(['web', 'app', 'myfed', 'svc'], new Map()), null, 'no federations');
});

t.test('federationAnswer', async (t) => {
  const q = federationQuery(['web', 'app', 'myfed', 'svc'], feds)!;
  const topo = { zone: 'us-east-1a', region: 'us-east-1' };
  const asked: string[] = [];
  t.same(federationAnswer(q, 'cluster.local', (ns, s) => (asked.push(`${ns}/${s}`), true), topo), { kind: 'local', target: 'web.app.svc.cluster.local' }, 'local endpoints: CNAME to the local service');
  t.same(asked, ['app/web'], 'asked about the local service');
  t.same(federationAnswer(q, 'cluster.local', () => false, topo), { kind: 'remote', target: 'web.app.myfed.svc.us-east-1a.us-east-1.example.com' }, 'none: CNAME into the federation');
  t.same(federationAnswer(q, 'cluster.local', () => false, null), { kind: 'nxdomain' }, 'no labelled node: NXDOMAIN');
});

t.test('the store keeps the topology of the first labelled node', async (t) => {
  const problems: string[] = [];
  const store = new ClusterStore({ servicesChanged() {}, rejected: (_k, p) => problems.push(p) }, CLUSTER_KINDS);
  const node = (name: string, labels: Record<string, string>) => ({ type: 'add' as const, kind: 'Node' as const, object: { metadata: { name, labels } } });
  store.event(node('bare', { 'kubernetes.io/hostname': 'bare' }));
  t.equal(store.topology(), null, 'an unlabelled node gives nothing');
  store.event(node('old', { 'failure-domain.beta.kubernetes.io/zone': 'Zone-A', 'failure-domain.beta.kubernetes.io/region': 'r1' }));
  t.same(store.topology(), { zone: 'zone-a', region: 'r1' }, 'the old labels, lowercased');
  store.event(node('new', { 'topology.kubernetes.io/zone': 'z2', 'topology.kubernetes.io/region': 'r2', 'failure-domain.beta.kubernetes.io/zone': 'ignored' }));
  t.same(store.topology(), { zone: 'zone-a', region: 'r1' }, 'the first labelled node wins');
  store.event({ type: 'delete', kind: 'Node', object: { metadata: { name: 'old' } } });
  t.same(store.topology(), { zone: 'z2', region: 'r2' }, 'after a delete the next one; topology.kubernetes.io labels first');
  store.event(node('new', { 'topology.kubernetes.io/zone': 'z2' }));
  t.equal(store.topology(), null, 'a node that lost its region label is dropped');
  store.event(node('odd', { 'topology.kubernetes.io/zone': 'a_b', 'topology.kubernetes.io/region': 'r' }));
  t.equal(store.topology(), null, 'a label value that cannot be a DNS name is ignored');
  t.match(problems, [/node odd: .*cannot be part of a DNS name/]);
  t.same(store.nodes.get('odd'), undefined);
  t.equal(store.services.size, 0, 'nodes are not services');
});

t.test('the cluster file reads Nodes (cluster-scoped)', async (t) => {
  const parsed = parseClusterFile('apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {topology.kubernetes.io/zone: z, topology.kubernetes.io/region: r}\n', CLUSTER_KINDS.map((k) => k.kind));
  t.same(parsed.objects.map((o) => [o.kind, o.key]), [['Node', 'Node/default/n1']]);
  t.same(parsed.ignored, []);
});
