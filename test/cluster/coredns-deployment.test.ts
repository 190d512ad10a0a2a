// Our image in kubeadm's coredns Deployment (issue 25): kubeadm's objects, its Corefile in ConfigMap
// coredns, only the image changed. Kubernetes' own [sig-network] DNS specs pass against it as they do
// against our addon, and an edit of the ConfigMap (a stub zone's block) is served once the kubelet has
// synced the volume and `reload` has read it.

import t from 'tap';
import { clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import { deployKubeadmCoreDns, execIn, startClientPod, waitFor } from './harness/addon.ts';
import { runE2eSpecs } from './harness/e2e-specs.ts';
import { kubeadmCorefile, readManifest, README_VALUES } from '../e2e/harness/manifests.ts';

t.setTimeout(25 * 60_000);

const FOCUS = '\\[sig-network\\] DNS';
const SKIP = 'Provider:GCE|\\[Serial\\]|\\[Disruptive\\]|\\[Feature:';

/** Our kube-dns image, as manifests/kube-dns.yaml names it. */
const IMAGE = readManifest('kube-dns.yaml', README_VALUES).find((o) => o.kind === 'Deployment')!.spec.template.spec.containers.find((c: { name: string }) => c.name === 'kubedns').image as string;

t.test("kubeadm's coredns Deployment with our image: Kubernetes' DNS specs, and a ConfigMap edit served", async (t) => {
  if (!clusterCanRun(t)) return;
  const c = await startNodeCluster(t, { proxyMode: 'iptables' });
  await deployKubeadmCoreDns(c, IMAGE);
  const specs = await runE2eSpecs(c, FOCUS, SKIP);
  t.equal(specs.length, 16, `16 specs ran (${specs.length})`);
  for (const s of specs) t.equal(s.state, 'passed', `${s.name} (${s.seconds.toFixed(0)} s)${s.failure ? `\n${s.failure}` : ''}`);

  // The node's second resolver (10.200.0.2) serves db.corp.example alone: a stub zone's block for it.
  await startClientPod(c, 'default', 'client');
  const ask = () => execIn(c, 'default', 'client', ['dig', '+short', '+tries=1', '+time=2', 'db.corp.example']);
  t.equal((await ask()).trim(), '', 'db.corp.example: not known before the edit');
  const corefile = `${kubeadmCorefile()}corp.example:53 {\n    errors\n    forward . 10.200.0.2\n}\n`;
  await c.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: corefile } }]);
  const edited = Date.now();
  await waitFor('db.corp.example through the stub block', async () => /^\d+\.\d+\.\d+\.\d+$/.test((await ask()).trim()), 150_000);
  t.pass(`the stub block served ${Math.round((Date.now() - edited) / 1000)} s after the edit (the kubelet's sync, then reload's 30 s)`);
});
