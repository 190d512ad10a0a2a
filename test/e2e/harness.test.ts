// The e2e harness itself: a real kube-apiserver + etcd starts, objects applied as admin are readable with the
// kube-dns token, and that token's RBAC (manifests/rbac.yaml) is as narrow as the manifest says.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { startCluster } from './harness/cluster.ts';
import { CLUSTER_KINDS, NODE_WATCH, startingWatches } from '../../pkg/cluster/kinds.ts';
import { podKind } from '../../pkg/autopath/kind.ts';
import { PodIndex } from '../../pkg/autopath/pod-index.ts';
import { NodeAddresses } from '../../pkg/autopath/node-addresses.ts';
import { collectionPath, describeWatch } from '../../pkg/source/source.ts';
import { e2eCanRun } from './harness/gate.ts';

if (e2eCanRun(t)) {
  const cluster = await startCluster(t);
  const asKubeDns = (path: string) => cluster.request('GET', path, undefined, cluster.kubeDnsToken);

  await cluster.apply(`
apiVersion: v1
kind: Namespace
metadata: { name: e2e-smoke }
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: e2e-smoke }
spec:
  ipFamilyPolicy: PreferDualStack
  ipFamilies: [IPv4, IPv6]
  ports: [{ name: http, port: 80, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: e2e-smoke
  labels: { kubernetes.io/service-name: web, endpointslice.kubernetes.io/managed-by: kube-dns-ts-e2e }
addressType: IPv4
endpoints:
  - addresses: [10.1.0.7]
    hostname: web-0
    conditions: { ready: true }
ports: [{ name: http, port: 8080, protocol: TCP }]
---
apiVersion: v1
kind: ConfigMap
metadata: { name: kube-dns, namespace: kube-system }
data: { upstreamNameservers: '["127.0.0.1"]' }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: other, namespace: kube-system }
data: { secret-ish: 'not for kube-dns' }
`);

  t.test('the API server serves the applied objects to the kube-dns token', async (t) => {
    const services = await asKubeDns('/api/v1/services');
    t.equal(services.status, 200, 'list services in all namespaces');
    const web = services.body.items.find((s: any) => s.metadata.namespace === 'e2e-smoke' && s.metadata.name === 'web');
    t.ok(web, 'the applied Service is listed');
    t.equal(web.spec.clusterIPs.length, 2, 'dual-stack Service got two ClusterIPs');
    t.match(web.spec.clusterIPs[0], /^10\.0\.0\.\d+$/, 'IPv4 ClusterIP from --service-cluster-ip-range');
    t.match(web.spec.clusterIPs[1], /^fd00:10::/, 'IPv6 ClusterIP from --service-cluster-ip-range');

    const slices = await asKubeDns('/apis/discovery.k8s.io/v1/endpointslices');
    t.equal(slices.status, 200, 'list endpointslices in all namespaces');
    const slice = slices.body.items.find((s: any) => s.metadata.name === 'web-abc');
    t.same(slice?.endpoints?.[0]?.addresses, ['10.1.0.7'], 'the applied EndpointSlice is listed');

    const watch = await asKubeDns(`/api/v1/services?watch=true&resourceVersion=${services.body.metadata.resourceVersion}&timeoutSeconds=1`);
    t.equal(watch.status, 200, 'watch services is allowed');
  });

  t.test('apply replaces an object that exists', async (t) => {
    await cluster.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' }, data: { federations: 'f=example.com' } }]);
    const cm = await asKubeDns('/api/v1/namespaces/kube-system/configmaps/kube-dns');
    t.equal(cm.status, 200, 'get configmap kube-dns');
    t.same(cm.body.data, { federations: 'f=example.com' });
  });

  t.test('the kube-dns token can list and watch every kind of the table (the shipped RBAC, optional parts applied), and nothing else', async (t) => {
    const watches = [
      ...startingWatches({ endpointsApi: 'endpointslices', configMap: 'kube-dns', configMapNamespace: 'kube-system' }),
      ...startingWatches({ endpointsApi: 'endpoints', configMap: '', configMapNamespace: '' }),
      NODE_WATCH,
      { kind: podKind(new PodIndex(), new NodeAddresses()) }, // --autopath, on by default
    ];
    t.same([...new Set(watches.map((w) => w.kind.kind))].sort(), [...CLUSTER_KINDS.map((k) => k.kind), 'Pod'].sort(), 'every kind of the table, and the Pods of --autopath');
    for (const w of watches) {
      const selector = w.fieldSelector ? `fieldSelector=${encodeURIComponent(w.fieldSelector)}&` : '';
      t.equal((await asKubeDns(`${collectionPath(w)}?${selector}limit=1`)).status, 200, `list ${describeWatch(w)}`);
      t.equal((await asKubeDns(`${collectionPath(w)}?${selector}watch=true&timeoutSeconds=1`)).status, 200, `watch ${describeWatch(w)}`);
    }

    const denied: [string, string][] = [
      ['/api/v1/secrets', 'list secrets'],
      ['/api/v1/namespaces/kube-system/secrets', 'list secrets in kube-system'],
      ['/api/v1/namespaces/e2e-smoke/pods/web-0', 'get a single pod'],
      ['/api/v1/namespaces/kube-system/configmaps/other', 'get another ConfigMap in kube-system'],
      ['/api/v1/namespaces/kube-system/configmaps', 'list all ConfigMaps in kube-system'],
      ['/api/v1/namespaces/e2e-smoke/services/web', 'get a single service (informers only list and watch)'],
      ['/api/v1/namespaces', 'list namespaces'],
    ];
    for (const [path, what] of denied) t.equal((await asKubeDns(path)).status, 403, `cannot ${what}`);

    const write = await cluster.request('DELETE', '/api/v1/namespaces/e2e-smoke/services/web', undefined, cluster.kubeDnsToken);
    t.equal(write.status, 403, 'cannot delete a service');
    const patch = await cluster.request('PATCH', '/api/v1/namespaces/kube-system/configmaps/kube-dns', { data: { x: 'y' } }, cluster.kubeDnsToken);
    t.equal(patch.status, 403, 'cannot change its own ConfigMap');
  });

  t.test('the API server restarts on the same URL with its data', async (t) => {
    await cluster.restartApiServer();
    const web = await asKubeDns('/api/v1/services?fieldSelector=metadata.name%3Dweb');
    t.equal(web.status, 200);
    t.equal(web.body.items.length, 1, 'the Service survived the restart');
  });

  t.test('a kubeconfig names the server, the CA and the token', async (t) => {
    const kc = parse(readFileSync(cluster.kubeconfig(cluster.kubeDnsToken), 'utf8'));
    t.equal(kc.clusters[0].cluster.server, cluster.url);
    t.equal(kc.clusters[0].cluster['certificate-authority'], cluster.caFile);
    t.equal(kc.users[0].user.token, cluster.kubeDnsToken);
  });
}
