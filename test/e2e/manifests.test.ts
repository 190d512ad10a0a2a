// The shipped manifests against a real kube-apiserver (test/e2e/harness): every object passes a
// server-side dry run, the pod template is admitted under Pod Security "restricted" and with its
// PriorityClass, the API server holds exactly the shipped RBAC rules, and the Deployment's pod, run as
// local processes with its own args, is healthy by its own probes and serves DNS with kube-dns bound by
// manifests/rbac.yaml alone.

import t from 'tap';
import { Applier } from './harness/apply.ts';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { runPodLocally } from './harness/local-pod.ts';
import { manifestFiles, only, RBAC_MANIFESTS, readManifest } from './harness/manifests.ts';
import type { PlaceholderValues } from './harness/manifests.ts';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';

const WAIT = 30_000;
// Not the README's values: a domain other than cluster.local shows it reaches all three containers, and
// the cluster IP must be inside the harness's service range (10.0.0.0/24).
const values: PlaceholderValues = { domain: 'cluster.e2e', server: '10.0.0.10', memoryLimit: '256Mi', localDns: '169.254.20.10' };

if (e2eCanRun(t)) {
  const cluster = await startCluster(t);
  const deployment = only(readManifest('kube-dns.yaml', values), 'Deployment', 'kube-dns');
  // The harness's create-or-replace, every write made a server-side dry run: full validation and
  // admission, nothing stored.
  const dryRun = new Applier((method, path, body) => cluster.request(method, method === 'GET' ? path : `${path}?dryRun=All`, body));

  t.test('every object of every manifest passes a server-side dry run', async (t) => {
    for (const file of manifestFiles()) {
      for (const obj of readManifest(file, values)) {
        await t.resolves(dryRun.apply([obj]), `${file}: ${obj.kind} ${obj.metadata.name}`);
      }
    }
    const stored = await cluster.request('GET', '/apis/apps/v1/namespaces/kube-system/deployments/kube-dns');
    t.equal(stored.status, 404, 'the dry run stored nothing');
    const bad = readManifest('kube-dns.yaml');
    await t.rejects(dryRun.apply([only(bad, 'Service')]), /__DNS__SERVER__|clusterIP/, 'unreplaced placeholders are refused');
  });

  t.test('the pod template is admitted as a Pod', async (t) => {
    const pod = (namespace: string, spec = deployment.spec.template.spec) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'kube-dns-dry-run', namespace, labels: deployment.spec.template.metadata.labels },
      spec,
    });
    const create = (p: ReturnType<typeof pod>) => cluster.request('POST', `/api/v1/namespaces/${p.metadata.namespace}/pods?dryRun=All`, p);

    const system = await create(pod('kube-system'));
    t.equal(system.status, 201, 'admitted in kube-system', { message: system.body?.message });
    t.equal(system.body.spec.priority, 2_000_000_000, 'system-cluster-critical exists and was resolved by the Priority admission plugin');

    const ns = await cluster.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'e2e-restricted', labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } },
    });
    t.equal(ns.status, 201, 'a namespace enforcing Pod Security "restricted"');
    const restricted = await create(pod('e2e-restricted'));
    t.equal(restricted.status, 201, 'admitted where "restricted" is enforced', { message: restricted.body?.message });

    const escalating = structuredClone(deployment.spec.template.spec);
    escalating.containers[2].securityContext.allowPrivilegeEscalation = true;
    const refused = await create(pod('e2e-restricted', escalating));
    t.equal(refused.status, 403, 'and the same pod with privilege escalation is refused there (the check is live)');
    t.match(refused.body.message, /violates PodSecurity "restricted/, 'by Pod Security');
  });

  t.test('the API server holds exactly the shipped RBAC', async (t) => {
    for (const file of RBAC_MANIFESTS) {
      for (const obj of readManifest(file)) {
        const path = obj.kind === 'ServiceAccount'
          ? `/api/v1/namespaces/${obj.metadata.namespace}/serviceaccounts/${obj.metadata.name}`
          : `/apis/rbac.authorization.k8s.io/v1/${obj.metadata.namespace ? `namespaces/${obj.metadata.namespace}/` : ''}${obj.kind.toLowerCase()}s/${encodeURIComponent(obj.metadata.name)}`;
        const got = await cluster.request('GET', path);
        t.equal(got.status, 200, `${file}: ${obj.kind} ${obj.metadata.name} is there`);
        if (obj.rules) t.same(got.body.rules, obj.rules, `${obj.kind} ${obj.metadata.name}: the same rules`);
        if (obj.roleRef) t.same([got.body.roleRef, got.body.subjects], [obj.roleRef, obj.subjects], `${obj.kind} ${obj.metadata.name}: the same role and subjects`);
      }
    }
  });

  t.test('the pod, run locally with its own args and only manifests/rbac.yaml bound', async (t) => {
    const asKubeDns = (path: string) => cluster.request('GET', path, undefined, cluster.kubeDnsToken);
    for (const file of RBAC_MANIFESTS.filter((f) => f !== 'rbac.yaml')) {
      for (const b of readManifest(file).filter((o) => o.kind === 'ClusterRoleBinding')) {
        t.equal((await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${encodeURIComponent(b.metadata.name)}`)).status, 200, `unbound ${file}`);
      }
    }
    // RBAC changes reach the authorizer through its informer: wait until the optional rules are gone.
    for (const [path, what] of [['/api/v1/endpoints', 'Endpoints refused without optional/rbac-endpoints.yaml']]) {
      await eventually(async () => (await asKubeDns(path)).status === 403, what, WAIT);
      t.pass(what);
    }

    await cluster.apply(`
apiVersion: v1
kind: Namespace
metadata: { name: e2e-pod }
---
apiVersion: v1
kind: Service
metadata: { name: db, namespace: e2e-pod }
spec:
  clusterIP: None
  ports: [{ name: pg, port: 5432, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-1
  namespace: e2e-pod
  labels: { kubernetes.io/service-name: db }
addressType: IPv4
endpoints:
  - addresses: [10.8.0.5]
    hostname: db-0
    conditions: { ready: true }
ports: [{ name: pg, port: 5432, protocol: TCP }]
`);

    const pod = await runPodLocally(t, deployment.spec.template.spec, { kubeconfig: cluster.kubeconfig(cluster.kubeDnsToken) });
    for (const c of deployment.spec.template.spec.containers) {
      for (const kind of ['readinessProbe', 'livenessProbe'] as const) {
        if (!c[kind]) continue;
        const { path, port } = c[kind].httpGet;
        await eventually(async () => (await pod.probe(c.name, kind)) === 200, `${c.name} ${kind} GET :${port}${path} answers 200`, WAIT);
        t.pass(`${c.name} ${kind} GET :${port}${path} answers 200`);
      }
    }

    // What pods ask: the Service's port 53 is dnscache in the dnsmasq container, which sends the
    // cluster domain to kube-dns.
    const dns = pod.port(53);
    t.same(answers(await dig(dns, `kubernetes.default.svc.${values.domain}`)), ['10.0.0.1'], 'the kubernetes Service through dnscache and kube-dns');
    t.same(answers(await dig(dns, `db.e2e-pod.svc.${values.domain}`)), ['10.8.0.5'], 'a headless Service\'s endpoint from its EndpointSlice');
    const srv = answers(await dig(dns, `_pg._tcp.db.e2e-pod.svc.${values.domain}`, 'SRV'));
    t.equal(srv.length, 1, 'one SRV record');
    t.match(srv[0], new RegExp(`^\\d+ \\d+ 5432 db-0\\.db\\.e2e-pod\\.svc\\.cluster\\.e2e\\.$`), 'SRV names the endpoint by its hostname');
    t.same(answers(await dig(dns, '1.0.0.10.in-addr.arpa', 'PTR')), [`kubernetes.default.svc.${values.domain}.`], 'reverse zone routed to kube-dns too');
    // The metrics ports no probe uses: PROMETHEUS_PORT (kube-dns) and the nanny's -metricsAddress.
    for (const [name, port] of [['kubedns-metrics', 10055], ['nanny-metrics', 10056]] as const) {
      const res = await fetch(`http://127.0.0.1:${pod.port(port)}/metrics`);
      t.equal(res.status, 200, `${name} (:${port}) serves /metrics`);
      t.match(await res.text(), /^# HELP /m);
    }
    t.notMatch(pod.programs.get('kubedns')!.output(), /forbidden|status=403\b/i, 'kube-dns was never refused by the API server');
  });
}
