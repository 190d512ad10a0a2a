// The senders kube-dns trusts to name their asker in a Client Subnet: loopback (the pod's dnscache)
// and the nodes the Pod and Node watches have shown (node-cache on each node, from its InternalIP or
// the address kube-proxy masquerades it to); never a pod's own address; a relist replaces the nodes
// the pods showed.

import t from 'tap';
import { NodeAddresses } from '../../pkg/autopath/node-addresses.ts';
import { nodeKind, podKind } from '../../pkg/autopath/kind.ts';
import { nodeSenderAddresses } from '../../pkg/autopath/trim-node.ts';
import type { ClusterKind } from '../../pkg/cluster/kind.ts';
import { PodIndex, ipv4Number, ipv4Text } from '../../pkg/autopath/pod-index.ts';
import type { KubeObject } from '../../pkg/source/source.ts';

const pod = (name: string, podIP: string, hostIP?: string, hostNetwork = false): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'apps', uid: `uid-${name}` },
  spec: { hostNetwork },
  status: { phase: 'Running', podIP, ...(hostIP ? { hostIP } : {}) },
});

t.test('loopback, and the nodes pods run on; not pods, not addresses nobody showed', async (t) => {
  const nodes = new NodeAddresses();
  const kind = podKind(new PodIndex(), nodes);
  t.ok(nodes.trusts('127.0.0.1'), 'loopback: the pod\'s dnscache');
  t.ok(nodes.trusts('::1'));
  t.notOk(nodes.trusts('10.0.0.5'), 'a node not seen yet');
  kind.apply(null as never, { type: 'add', kind: 'Pod', object: pod('a', '10.244.1.7', '10.0.0.5') });
  t.ok(nodes.trusts('10.0.0.5'), "a pod's hostIP: its node");
  t.ok(nodes.trusts('::ffff:10.0.0.5'), 'as an IPv4-mapped sender too');
  t.notOk(nodes.trusts('10.244.1.7'), "a pod's own address");
  kind.apply(null as never, { type: 'add', kind: 'Pod', object: pod('b', '10.244.2.9') });
  t.equal(nodes.size, 1, 'a pod without a hostIP adds none');
  t.notOk(nodes.trusts('not an address'));
});

t.test('a relist replaces the nodes known: a node gone is no longer trusted', async (t) => {
  const nodes = new NodeAddresses();
  nodes.add(ipv4Number('10.0.0.5'));
  nodes.add(ipv4Number('10.0.0.6'));
  nodes.beginRelist();
  nodes.add(ipv4Number('10.0.0.6'));
  t.ok(nodes.trusts('10.0.0.5'), 'trusted while the relist runs');
  nodes.endRelist();
  t.notOk(nodes.trusts('10.0.0.5'), 'gone from the list: forgotten');
  t.ok(nodes.trusts('10.0.0.6'));
});

const nodeObject = (name: string, o: { addresses?: [string, string][]; podCIDRs?: string[]; podCIDR?: string; annotations?: Record<string, string> }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, ...(o.annotations ? { annotations: o.annotations } : {}) },
  spec: { ...(o.podCIDRs ? { podCIDRs: o.podCIDRs } : {}), ...(o.podCIDR ? { podCIDR: o.podCIDR } : {}) },
  status: { addresses: (o.addresses ?? []).map(([type, address]) => ({ type, address })) },
});

const base: ClusterKind = { kind: 'Node', api: '/api/v1', resource: 'nodes', optional: true, what: 'Nodes', apply: () => {} };

t.test("a Node's addresses: where kube-proxy's masquerade puts node-cache's queries", async (t) => {
  const pods = new PodIndex();
  const nodes = new NodeAddresses((ip) => pods.has(ip));
  const kind = nodeKind(base, nodes);
  const add = (o: KubeObject) => kind.apply(null as never, { type: 'add', kind: 'Node', object: o });
  add(nodeObject('n1', { addresses: [['InternalIP', '10.0.0.5'], ['Hostname', 'n1'], ['InternalIP', 'fd00::5']], podCIDRs: ['10.244.3.0/24', 'fd00:10:244:3::/64'] }));
  t.ok(nodes.trusts('10.0.0.5'), 'its InternalIP');
  t.ok(nodes.trusts('10.244.3.1'), "its pod range's gateway (the CNI bridge: the host's traffic to a pod on the node)");
  t.ok(nodes.trusts('10.244.3.0'), "its pod range's network address (flannel's VXLAN device: to a pod on another node)");
  t.notOk(nodes.trusts('10.244.3.2'), 'not the rest of its range: pods live there');
  add(nodeObject('n2', { podCIDR: '10.244.7.0/24', annotations: { 'projectcalico.org/IPv4VXLANTunnelAddr': '192.168.50.64', 'network.cilium.io/ipv4-cilium-host': '10.9.1.17' } }));
  t.ok(nodes.trusts('10.244.7.1'), 'spec.podCIDR of an older node');
  t.ok(nodes.trusts('192.168.50.64'), "Calico's tunnel address");
  t.ok(nodes.trusts('10.9.1.17'), "Cilium's host address");
  pods.set(ipv4Number('10.244.3.1'), 'apps', 1);
  t.notOk(nodes.trusts('10.244.3.1'), 'a pod at a gateway address (a CNI that hands it out): never trusted');
  kind.apply(null as never, { type: 'update', kind: 'Node', object: nodeObject('n1', { addresses: [['InternalIP', '10.0.0.9']] }) });
  t.notOk(nodes.trusts('10.0.0.5'), 'an address the node no longer has');
  t.ok(nodes.trusts('10.0.0.9'));
  kind.apply(null as never, { type: 'delete', kind: 'Node', object: { metadata: { name: 'n1' } } });
  t.notOk(nodes.trusts('10.0.0.9'), 'a deleted node');
  t.ok(nodes.trusts('10.244.7.1'), "another node's stay");
});

t.test('two nodes naming one address: trusted until both are gone', async (t) => {
  const nodes = new NodeAddresses();
  nodes.setNode('a', [ipv4Number('10.0.0.1')]);
  nodes.setNode('b', [ipv4Number('10.0.0.1')]);
  nodes.setNode('a', []);
  t.ok(nodes.trusts('10.0.0.1'), 'b still names it');
  nodes.setNode('b', []);
  t.notOk(nodes.trusts('10.0.0.1'));
});

t.test("malformed Node fields add nothing and throw nothing", async (t) => {
  for (const [what, o] of [
    ['a /31 range (no gateway)', { podCIDRs: ['10.244.9.0/31'] }],
    ['a range without a prefix', { podCIDRs: ['10.244.9.0'] }],
    ['an unparsable address', { addresses: [['InternalIP', '10.0.0.300']] as [string, string][] }],
    ['an annotation that is no address', { annotations: { 'projectcalico.org/IPv4IPIPTunnelAddr': 'none' } }],
  ] as [string, Parameters<typeof nodeObject>[1]][]) {
    t.same(nodeSenderAddresses(nodeObject('x', o)), [], what);
  }
  t.same(nodeSenderAddresses({ metadata: { name: 'bare' }, spec: { podCIDRs: 'not a list' }, status: { addresses: 7 } } as never), [], 'fields of the wrong shape');
});

t.test('the watches say which addresses may have changed their namespace or trust: a pod added, gone, another namespace at its address; a new node; every address at a relist end; a Node whose addresses changed', async (t) => {
  const changed: (string | null)[] = [];
  const heard = (ip: number | null) => changed.push(ip === null ? null : ipv4Text(ip));
  const nodes = new NodeAddresses();
  const kind = podKind(new PodIndex(), nodes, heard);
  const apply = (type: 'add' | 'update' | 'delete', object: KubeObject) => kind.apply(null as never, { type, kind: 'Pod', object });
  apply('add', pod('a', '10.244.1.7', '10.0.0.5'));
  t.same(changed.splice(0), ['10.0.0.5', '10.244.1.7'], 'a new node, a new pod');
  apply('update', pod('a', '10.244.1.7', '10.0.0.5'));
  t.same(changed.splice(0), [], 'the same again: nothing');
  apply('delete', pod('a', '10.244.1.7', '10.0.0.5'));
  t.same(changed.splice(0), ['10.244.1.7'], 'gone');
  apply('add', { ...pod('b', '10.244.1.7', '10.0.0.5'), metadata: { name: 'b', namespace: 'web', uid: 'uid-b' } });
  t.same(changed.splice(0), ['10.244.1.7'], 'a pod of another namespace at the address');
  kind.forgetful!.relisting();
  kind.forgetful!.relisted();
  t.same(changed.splice(0), [null], 'a relist: any address');
  const node = nodeKind(base, nodes, heard);
  node.apply(null as never, { type: 'add', kind: 'Node', object: nodeObject('n1', { addresses: [['InternalIP', '10.0.0.6']] }) });
  t.same(changed.splice(0), ['10.0.0.6'], "a Node's address");
  node.apply(null as never, { type: 'update', kind: 'Node', object: nodeObject('n1', { addresses: [['InternalIP', '10.0.0.5']] }) });
  t.same(changed.splice(0), ['10.0.0.6', '10.0.0.5'], 'one it no longer has, one it has now (no pod shows it since the relist)');
  apply('add', pod('c', '10.244.1.9', '10.0.0.5'));
  t.same(changed.splice(0), ['10.244.1.9'], 'a pod on a node already trusted: its own address only');
});
