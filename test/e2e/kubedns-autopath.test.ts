// --autopath on a real kube-apiserver, with the kube-dns token (bound by manifests/rbac.yaml, whose
// Pods rule it needs): Pods are listed and watched; a pod gets its address as the kubelet gives it
// (the status subresource), and from then on the first candidate of its search walk is answered with
// the end of the walk; once the pod is gone, its address is unknown again. Without the Pods rule (the
// original's RBAC), kube-dns is ready and answers as without autopath.

import t from 'tap';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import { sample, scrape } from '../helpers/sidecar.ts';

const POD_IP = '10.244.7.8';
const NAME = 'kubernetes.default.apps.svc.cluster.local';

t.test('Pods from a real API server: an address known once the pod has it, forgotten when the pod goes', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  await cluster.apply('apiVersion: v1\nkind: Namespace\nmetadata: { name: apps }');
  await cluster.apply(`apiVersion: v1
kind: Pod
metadata: { name: client, namespace: apps }
spec: { containers: [{ name: c, image: example.invalid/c }] }`);
  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--autopath'] });
  t.match(kd.program.output(), /watching=".*Pods \(addresses, for autopath\)/, 'listed and watched from the start');
  // dig from loopback with the pod's address as Client Subnet: as dnscache --add-subnet asks.
  const ask = () => dig(kd.dnsPort, NAME, 'A', [`+subnet=${POD_IP}/32`, '+time=1', '+tries=1']);
  t.equal((await ask()).status, 'NXDOMAIN', 'no address yet: unknown');

  const programmed = () => scrape(kd.httpPort).then((m) => sample(m, 'kubedns_dns_programming_duration_seconds_count'));
  const programmedBefore = await programmed();
  const patched = await cluster.request('PATCH', '/api/v1/namespaces/apps/pods/client/status', { status: { phase: 'Running', podIP: POD_IP, podIPs: [{ ip: POD_IP }] } });
  t.equal(patched.status, 200);
  const started = Date.now();
  const known = await eventually(async () => {
    const r = await ask();
    return r.status === 'NOERROR' ? r : null;
  }, 'the address learnt from the watch', 10_000);
  t.ok(Date.now() - started < 2000, 'within 2 s of the kubelet-style status update');
  t.same(known.answer.map((a) => a.type), ['CNAME', 'A'], "a CNAME to the API server's Service, then its address");
  t.equal(known.answer[0].data, 'kubernetes.default.svc.cluster.local.');
  t.match(known.raw, new RegExp(`CLIENT-SUBNET: ${POD_IP.replaceAll('.', '\\.')}/32/32`), 'scoped to the pod');
  t.equal(sample(await scrape(kd.httpPort), 'kubedns_autopath_pods'), 1);
  t.equal(await programmed(), programmedBefore, 'a pod event is not a DNS programming (the latency histogram is for Services)');
  t.notMatch(kd.program.output(), /forbidden/i, 'the optional RBAC lets the kube-dns identity read them');

  t.equal((await cluster.request('DELETE', '/api/v1/namespaces/apps/pods/client', { gracePeriodSeconds: 0 })).status, 200);
  await eventually(async () => (await ask()).status === 'NXDOMAIN', 'the address forgotten with the pod', 10_000);
  t.equal(sample(await scrape(kd.httpPort), 'kubedns_autopath_pods'), 0);
});

t.test("the original's RBAC, without the Pods rule: ready, the refused list logged once, answers as without autopath", async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const role = await cluster.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:kube-dns');
  const rules = (role.body.rules as { resources: string[] }[]).filter((r) => !r.resources.includes('pods'));
  t.equal((await cluster.request('PATCH', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:kube-dns', { rules })).status, 200);
  await eventually(async () => (await cluster.request('GET', '/api/v1/pods', undefined, cluster.kubeDnsToken)).status === 403, 'Pods refused to the kube-dns token', 10_000);

  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`] });
  t.equal((await fetch(`http://127.0.0.1:${kd.httpPort}/readiness`)).status, 200, 'ready: Pods are optional');
  await kd.program.waitFor(/cannot list\/watch Pod \(optional: only what needs it waits\); retrying with backoff.*status=403/, 10_000);
  const ask = await dig(kd.dnsPort, NAME, 'A', [`+subnet=${POD_IP}/32`, '+time=1', '+tries=1']);
  t.equal(ask.status, 'NXDOMAIN', 'the first candidate answered as without autopath');
  t.equal((await dig(kd.dnsPort, 'kubernetes.default.svc.cluster.local', 'A')).status, 'NOERROR', 'the cluster answered');
  await new Promise((r) => setTimeout(r, 2500)); // retries at 0.5, 1 and 2 s
  t.equal(kd.program.output().match(/cannot list\/watch Pod\b/g)?.length, 1, 'logged once, not at every retry');
});
