// The limited asker named as its pod, on a real kube-apiserver with the kube-dns token (the shipped
// RBAC): a pod in namespace apps gets its address as the kubelet gives it; dnsperf floods made-up
// names in its name (from loopback with the pod's address as Client Subnet, as the pod's dnscache
// asks), and kube-dns's line says `pod=apps/flooder`, with the namespace, when it limits it and when
// it lets it go.

import t from 'tap';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { eventually } from '../helpers/eventually.ts';
import { askFrom, floodNames } from '../helpers/flood.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import { sample, scrape } from '../helpers/sidecar.ts';

const POD_IP = '10.244.7.9';
/** dnsperf's -E: a Client Subnet (option 8) of family 1, /32, scope 0, the pod's address. */
const SUBNET = `8:00012000${POD_IP.split('.').map((o) => Number(o).toString(16).padStart(2, '0')).join('')}`;

t.test("a flooding pod's miss over its share: the log names it as namespace/name, when limited and when let go", async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  await cluster.apply('apiVersion: v1\nkind: Namespace\nmetadata: { name: apps }');
  await cluster.apply('apiVersion: v1\nkind: Pod\nmetadata: { name: flooder, namespace: apps }\nspec: { containers: [{ name: c, image: example.invalid/c }] }');
  t.equal((await cluster.request('PATCH', '/api/v1/namespaces/apps/pods/flooder/status', { status: { phase: 'Running', podIP: POD_IP, podIPs: [{ ip: POD_IP }] } })).status, 200);
  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--fair-share-busy=5', '--fair-share-floor=50'] });
  await eventually(async () => sample(await scrape(kd.httpPort), 'kubedns_autopath_pods') === 1, 'the pod address known', 10_000);
  const stop = await floodNames(t, kd.dnsPort, '127.0.0.1', 10_000, 'default.svc.cluster.local', ['-E', SUBNET]);
  // Another asker beside it: an asker alone is shared with nobody.
  await askFrom(kd.dnsPort, '127.0.0.2', Array.from({ length: 10 }, (_, i) => `none${i}.default.svc.cluster.local`));
  const limited = await kd.program.waitFor(/asker limited: .*asker=10\.244\.7\.9 .*/, 15_000);
  t.match(limited[0], /namespace=apps/, 'its namespace, from the Pod index');
  t.match(limited[0], /pod=apps\/flooder/, 'and its pod by name, from the API server');
  stop();
  const letGo = await kd.program.waitFor(/asker no longer limited.*asker=10\.244\.7\.9.*/, 10_000);
  t.match(letGo[0], /pod=apps\/flooder/, 'named when let go too');
  t.notMatch(kd.program.output(), /forbidden/i, "the shipped RBAC's Pods rule lets kube-dns list them by address");
});
