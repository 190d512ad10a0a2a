// The senders kube-dns trusts to name their asker in a Client Subnet: loopback (the pod's dnscache)
// and the nodes the Pod watch has shown (node-cache on each node); never a pod's own address; a
// relist replaces the nodes known.

import t from 'tap';
import { NodeAddresses } from '../../pkg/autopath/node-addresses.ts';
import { podKind } from '../../pkg/autopath/kind.ts';
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

t.test('the watch says which addresses may have changed their namespace or trust: a pod added, moved, gone; a new node; every address at a relist end', async (t) => {
  const changed: (string | null)[] = [];
  const kind = podKind(new PodIndex(), new NodeAddresses(), (ip) => changed.push(ip === null ? null : ipv4Text(ip)));
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
});
