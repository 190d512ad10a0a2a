// --endpoints-api=endpoints on a real API server: kube-dns reads core/v1 Endpoints instead of
// EndpointSlices (old clusters), with only the shipped RBAC (manifests/optional/rbac-endpoints.yaml's
// system:kube-dns:endpoints role).

import t from 'tap';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startKubeDns } from '../helpers/kubedns.ts';

t.test('headless service records from core/v1 Endpoints', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const endpoints = (ips: string[]) => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'legacy', namespace: 'default' },
    subsets: [{ addresses: ips.map((ip, i) => ({ ip, hostname: `legacy-${i}` })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
  });
  await cluster.apply([{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'legacy', namespace: 'default' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 8080 }] } }, endpoints(['10.5.0.1', '10.5.0.2'])]);
  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--endpoints-api=endpoints'] });
  t.match(kd.program.output(), /watching="[^"]*Endpoints core\/v1/, 'the start line says core/v1 Endpoints are read');
  const a = await eventually(async () => {
    const r = await dig(kd.dnsPort, 'legacy.default.svc.cluster.local');
    return answers(r).length === 2 && r;
  }, 'both endpoint addresses served', 20_000);
  t.same(answers(a), ['10.5.0.1', '10.5.0.2']);
  t.same(answers(await dig(kd.dnsPort, 'legacy-1.legacy.default.svc.cluster.local')), ['10.5.0.2'], 'hostname records');
  t.same(answers(await dig(kd.dnsPort, '_http._tcp.legacy.default.svc.cluster.local', 'SRV')).length, 2);
  await cluster.apply([endpoints(['10.5.0.3'])]);
  const changed = await eventually(async () => {
    const r = await dig(kd.dnsPort, 'legacy.default.svc.cluster.local');
    return answers(r)[0] === '10.5.0.3' && r;
  }, 'the update served', 20_000);
  t.same(answers(changed), ['10.5.0.3']);
});
