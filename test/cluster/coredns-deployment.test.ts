// Our image in kubeadm's coredns Deployment (issue 25): kubeadm's objects, its Corefile in ConfigMap
// coredns, only the image changed. Kubernetes' own [sig-network] DNS specs pass against it as they do
// against our addon, and an edit of the ConfigMap (a stub zone's block, a hosts entry, a rewrite) is
// served once the kubelet has synced the volume and `reload` has read it; a broken edit is refused and
// the running Corefile answers on.

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
  const ask = async (name: string) => (await execIn(c, 'default', 'client', ['dig', '+short', '+tries=1', '+time=2', name])).trim().split('\n').filter((l) => l !== '');
  const addresses = (lines: string[]) => lines.filter((l) => /^\d+\.\d+\.\d+\.\d+$/.test(l));
  t.same(await ask('db.corp.example'), [], 'db.corp.example: not known before the edit');
  t.same(await ask('gateway.lan'), [], 'gateway.lan: not known before the edit');
  // An operator's edit: a stub zone's block, a hosts entry and a rewrite in the cluster's block.
  const edit = (corefile: string) => c.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: corefile } }]);
  const stub = `corp.example:53 {\n    errors\n    forward . 10.200.0.2\n}\n`;
  const block = kubeadmCorefile().replace('    prometheus :9153\n', '    hosts {\n       192.0.2.10 gateway.lan\n       fallthrough\n    }\n    rewrite name api.corp.lan kubernetes.default.svc.cluster.local\n    prometheus :9153\n');
  if (!block.includes('gateway.lan')) throw new Error("kubeadm's Corefile has no `prometheus :9153` line to add before");
  await edit(`${block}${stub}`);
  const edited = Date.now();
  // Each replica reloads on its own (its volume synced by the kubelet, then its own reload timer), and
  // the Service spreads the lookups (a new socket each): the edit is served once eight in a row see it.
  const everyReplica = async (probe: () => Promise<boolean>) => {
    for (let i = 0; i < 8; i++) if (!(await probe())) return false;
    return true;
  };
  await waitFor('db.corp.example through the stub block, on every replica', () => everyReplica(async () => addresses(await ask('db.corp.example')).length === 1 && (await ask('gateway.lan')).includes('192.0.2.10')), 150_000);
  t.pass(`the edit served ${Math.round((Date.now() - edited) / 1000)} s after it was applied (the kubelet's sync, then reload's 30 s)`);
  t.same(await ask('gateway.lan'), ['192.0.2.10'], 'the hosts entry');
  const kubernetes = (await c.kubectl(['-n', 'default', 'get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  t.same(addresses(await ask('api.corp.lan')), [kubernetes], "the rewrite: the API server's Service under another name");
  // A broken edit: every replica refuses it and answers on with the running Corefile.
  await edit(`${block.replace('    loop\n', '    loop\n    rewrite ttl api.corp.lan 30\n')}${stub}`);
  const broken = Date.now();
  const replicas = (await c.kubectl(['-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=kube-dns', '-o', 'name'])).trim().split('\n');
  const refused = async (pod: string) => /Corefile not reloaded: the running one serves on.*a rewrite rule of the ttl field is not served/.test(await c.kubectl(['-n', 'kube-system', 'logs', pod, '--tail=50']));
  await waitFor('the broken edit refused in the logs of every replica', async () => (await Promise.all(replicas.map(refused))).every(Boolean), 150_000);
  t.pass(`the broken edit refused ${Math.round((Date.now() - broken) / 1000)} s after it was applied`);
  t.same(await ask('gateway.lan'), ['192.0.2.10'], 'the running Corefile answers on');
  t.equal(addresses(await ask('db.corp.example')).length, 1);
});
