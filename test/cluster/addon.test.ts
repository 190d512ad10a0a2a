// The addon from manifests/ on a real single-node cluster (test/cluster/harness): deployed as the
// README tells users, asked by real pods through the kube-dns Service's ClusterIP.

import t from 'tap';
import { clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import { deployAddon, execIn, startClientPod } from './harness/addon.ts';
import { NET } from './harness/node-config.ts';

t.test('the addon answers pods through the ClusterIP (kube-proxy iptables)', async (t) => {
  if (!clusterCanRun(t)) return;
  const c = await startNodeCluster(t, { proxyMode: 'iptables' });
  await deployAddon(c);
  await startClientPod(c, 'default', 'client');
  const resolv = await execIn(c, 'default', 'client', ['cat', '/etc/resolv.conf']);
  t.match(resolv, new RegExp(`nameserver ${NET.dnsServiceIp.replaceAll('.', '\\.')}`), "the kubelet's resolv.conf names the Service");
  const udp = await execIn(c, 'default', 'client', ['dig', '+short', '+tries=1', '+time=3', 'kubernetes.default.svc.cluster.local']);
  t.equal(udp.trim(), NET.kubernetesServiceIp, 'UDP through the ClusterIP');
  const tcp = await execIn(c, 'default', 'client', ['dig', '+short', '+tcp', '+tries=1', '+time=3', 'kubernetes.default.svc.cluster.local']);
  t.equal(tcp.trim(), NET.kubernetesServiceIp, 'TCP through the ClusterIP');
});
