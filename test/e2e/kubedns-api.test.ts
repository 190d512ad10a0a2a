// kube-dns against a real kube-apiserver + etcd (test/e2e/harness): the real binary, authenticated with a
// token bound only by manifests/rbac.yaml, reading Services, EndpointSlices and its ConfigMap through
// the API; answers checked with dig. Then the failures a cluster throws at it: an API server restart,
// a watch gone silent behind a half-open connection, a 410 relist, objects DNS cannot use.
// kube-dns reaches the API server through a TCP proxy (harness/api-proxy.ts, on loopback), which can
// freeze the connections it carries (a NAT dropping a flow without a reset), cut them, and refuse new ones.

import t from 'tap';
import { ApiProxy } from './harness/api-proxy.ts';
import { binariesAvailable, startCluster } from './harness/cluster.ts';
import type { TestCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import type { KubeDns } from '../helpers/kubedns.ts';

const WAIT = 20_000;

async function metrics(kd: KubeDns): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${kd.httpPort}/metrics`);
  return res.text();
}

/** The value of one sample, e.g. metric(text, 'kubedns_source_relists_total{kind="Service"}'); 0 when absent. */
function metric(text: string, sample: string): number {
  for (const line of text.split('\n')) if (line.startsWith(sample + ' ')) return Number(line.slice(sample.length + 1));
  return 0;
}

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const svc = (namespace: string, name: string, spec: object) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec });
const slice = (namespace: string, service: string, name: string, addressType: string, endpoints: object[], ports: object[] = []) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'e2e' } },
  addressType,
  endpoints,
  ports,
});

const ok = async (p: Promise<{ status: number; body: any }>, what: string) => {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
};

/** dig until `check` accepts the answers (the watch delivers asynchronously). */
async function served(kd: KubeDns, name: string, type: string, want: string[] | 'NXDOMAIN', what: string): Promise<void> {
  let last = '';
  await eventually(async () => {
    const r = await dig(kd.dnsPort, name, type);
    last = `${r.status} ${answers(r, type).join(',')}`;
    if (want === 'NXDOMAIN') return r.status === 'NXDOMAIN';
    return r.status === 'NOERROR' && JSON.stringify(answers(r, type)) === JSON.stringify([...want].sort());
  }, `${what}: ${name} ${type} → ${want} (last: ${last})`, WAIT);
}

t.test('kube-dns on a real API server', async (t) => {
  if (!e2eCanRun(t)) return;
  t.comment(`binaries: ${JSON.stringify(binariesAvailable())}`);
  const cluster: TestCluster = await startCluster(t);
  const apiPort = Number(new URL(cluster.url).port);
  const proxy = await ApiProxy.start(apiPort);
  t.teardown(() => proxy.close());
  const upA = await startDnsmasq(t, ['192.0.2.1 www.example.com']);
  const upB = await startDnsmasq(t, ['192.0.2.2 www.example.com']);
  const decoy = await startDnsmasq(t, ['192.0.2.66 www.example.com']);
  await cluster.apply([
    ns('app'),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' }, data: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upA.port}`]) } },
    // Another ConfigMap of the namespace must never be taken as the config (the original's bug).
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'decoy', namespace: 'kube-system' }, data: { upstreamNameservers: JSON.stringify([`127.0.0.1:${decoy.port}`]) } },
    svc('app', 'web', { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }),
  ]);

  const kd = await startKubeDns(t, {
    args: [
      `--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`,
      // The kubeconfig's credentials and CA, the proxy's address (the original's override).
      `--kube-master-url=https://127.0.0.1:${proxy.port}`,
      '--config-map=kube-dns',
      '--silent-watch-timeout=4s',
    ],
  });
  const out = kd.program.output();
  t.match(out, new RegExp(`connecting to the Kubernetes API server=https://127.0.0.1:${proxy.port} identity="bearer token of kubeconfig user \\\\"e2e\\\\"" watching="Services \\(all namespaces\\), EndpointSlices discovery.k8s.io/v1 \\(all namespaces\\), ConfigMap kube-system/kube-dns, Nodes \\(node-cache senders\\), Pods \\(addresses, for autopath\\) \\(all namespaces\\)"`), 'one line: server, identity, what is watched (Pods and Nodes: --autopath is on by default)');
  t.notMatch(out, cluster.kubeDnsToken, 'the token is never logged');

  const web = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/web'), 'get web');
  await served(kd, 'web.app.svc.cluster.local', 'A', [web.spec.clusterIP], 'a Service listed at start');
  t.equal((await fetch(`http://127.0.0.1:${kd.httpPort}/readiness`)).status, 200);

  t.test('records follow Services and EndpointSlices as they change', async (t) => {
    await cluster.apply([
      svc('app', 'dual', { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'], ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] }),
      svc('app', 'db', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] }),
      slice('app', 'db', 'db-1', 'IPv4', [
        { addresses: ['10.1.0.1'], hostname: 'db-0', conditions: { ready: true } },
        { addresses: ['10.1.0.2'], hostname: 'db-1', conditions: { ready: true } },
        { addresses: ['10.1.0.3'], conditions: { ready: false } },
      ], [{ name: 'pg', port: 5432, protocol: 'TCP' }]),
      svc('app', 'ext', { type: 'ExternalName', externalName: 'www.example.com' }),
    ]);
    const dual = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/dual'), 'get dual');
    t.equal(dual.spec.clusterIPs.length, 2, 'the API server gave the dual-stack Service two cluster IPs');
    await served(kd, 'dual.app.svc.cluster.local', 'A', [dual.spec.clusterIPs[0]], 'dual-stack A');
    await served(kd, 'dual.app.svc.cluster.local', 'AAAA', [dual.spec.clusterIPs[1]], 'dual-stack AAAA');
    await served(kd, 'db.app.svc.cluster.local', 'A', ['10.1.0.1', '10.1.0.2'], 'headless: the ready endpoints');
    await served(kd, 'db-1.db.app.svc.cluster.local', 'A', ['10.1.0.2'], 'headless: a hostname');
    const srv = await dig(kd.dnsPort, '_pg._tcp.db.app.svc.cluster.local', 'SRV');
    t.same(answers(srv, 'SRV'), ['10 50 5432 db-0.db.app.svc.cluster.local.', '10 50 5432 db-1.db.app.svc.cluster.local.']);
    await served(kd, 'ext.app.svc.cluster.local', 'CNAME', ['www.example.com.'], 'ExternalName');
    t.same(answers(await dig(kd.dnsPort, '', 'PTR', ['-x', dual.spec.clusterIPs[0]])), ['dual.app.svc.cluster.local.'], 'PTR of a cluster IP');
    t.same(answers(await dig(kd.dnsPort, '', 'PTR', ['-x', dual.spec.clusterIPs[1]])), ['dual.app.svc.cluster.local.'], 'PTR of an IPv6 cluster IP');
    t.same(answers(await dig(kd.dnsPort, '', 'PTR', ['-x', '10.1.0.2'])), ['db-1.db.app.svc.cluster.local.'], 'PTR of an endpoint');
    t.same(answers(await dig(kd.dnsPort, 'dns-version.cluster.local', 'TXT')), ['"1.1.0"']);
    t.same(answers(await dig(kd.dnsPort, '10-9-8-7.app.pod.cluster.local', 'A')), ['10.9.8.7'], 'pod record');
    t.equal((await dig(kd.dnsPort, 'app.svc.cluster.local', 'A')).status, 'NOERROR', 'a namespace with services is NODATA');

    // An endpoint becomes ready, one goes.
    await cluster.apply([slice('app', 'db', 'db-1', 'IPv4', [
      { addresses: ['10.1.0.1'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['10.1.0.3'], conditions: { ready: true } },
    ], [{ name: 'pg', port: 5432, protocol: 'TCP' }])]);
    await served(kd, 'db.app.svc.cluster.local', 'A', ['10.1.0.1', '10.1.0.3'], 'an EndpointSlice update');
    await served(kd, 'db-1.db.app.svc.cluster.local', 'A', 'NXDOMAIN', 'a hostname gone');

    // A Service changes type: ExternalName → ClusterIP, and ClusterIP → ExternalName.
    const extBefore = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/ext'), 'get ext');
    await ok(cluster.request('PUT', '/api/v1/namespaces/app/services/ext', {
      ...svc('app', 'ext', { type: 'ClusterIP', ports: [{ port: 80 }] }),
      metadata: { name: 'ext', namespace: 'app', resourceVersion: extBefore.metadata.resourceVersion },
    }), 'ext → ClusterIP');
    const ext = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/ext'), 'get ext');
    await served(kd, 'ext.app.svc.cluster.local', 'A', [ext.spec.clusterIP], 'ExternalName became ClusterIP');
    await served(kd, 'ext.app.svc.cluster.local', 'CNAME', [], 'no CNAME any more');
    await ok(cluster.request('PUT', '/api/v1/namespaces/app/services/dual', {
      ...svc('app', 'dual', { type: 'ExternalName', externalName: 'other.example.org' }),
      metadata: { name: 'dual', namespace: 'app', resourceVersion: dual.metadata.resourceVersion },
    }), 'dual → ExternalName');
    await served(kd, 'dual.app.svc.cluster.local', 'CNAME', ['other.example.org.'], 'ClusterIP became ExternalName');

    await ok(cluster.request('DELETE', '/api/v1/namespaces/app/services/db'), 'delete db');
    await served(kd, 'db.app.svc.cluster.local', 'A', 'NXDOMAIN', 'a deleted Service');
    const m = await metrics(kd);
    t.ok(metric(m, 'kubedns_dns_programming_duration_seconds_count') > 0, 'programming latency observed');
    t.equal(metric(m, 'kubedns_source_synced'), 1);
    t.ok(metric(m, 'kubedns_source_objects{kind="Service"}') >= 4);
  });

  t.test('a deleted namespace takes its records with it', async (t) => {
    await cluster.apply([ns('gone'), svc('gone', 'a', { ports: [{ port: 80 }] }), svc('gone', 'b', { clusterIP: 'None', ports: [{ port: 80 }] }),
      slice('gone', 'b', 'b-1', 'IPv4', [{ addresses: ['10.2.0.1'], conditions: { ready: true } }])]);
    await served(kd, 'b.gone.svc.cluster.local', 'A', ['10.2.0.1'], 'before the namespace goes');
    await ok(cluster.request('DELETE', '/api/v1/namespaces/gone'), 'delete namespace');
    // No kube-controller-manager runs here: do what its namespace controller does, delete the contents.
    await ok(cluster.request('DELETE', '/api/v1/namespaces/gone/services/a'), 'delete a');
    await ok(cluster.request('DELETE', '/api/v1/namespaces/gone/services/b'), 'delete b');
    await ok(cluster.request('DELETE', '/apis/discovery.k8s.io/v1/namespaces/gone/endpointslices'), 'delete slices');
    await served(kd, 'a.gone.svc.cluster.local', 'A', 'NXDOMAIN', 'namespace contents gone');
    await served(kd, 'b.gone.svc.cluster.local', 'A', 'NXDOMAIN', 'namespace contents gone');
  });

  t.test('upstreams come from the --config-map ConfigMap only, and follow it', async (t) => {
    await served(kd, 'www.example.com', 'A', ['192.0.2.1'], 'the ConfigMap upstream, not the decoy');
    await cluster.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' }, data: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upB.port}`]) } }]);
    await served(kd, 'www.example.com', 'A', ['192.0.2.2'], 'the changed ConfigMap');
    await cluster.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'decoy', namespace: 'kube-system' }, data: { upstreamNameservers: JSON.stringify([`127.0.0.1:${decoy.port}`]), x: '1' } }]);
    await new Promise((r) => setTimeout(r, 500));
    t.same(answers(await dig(kd.dnsPort, 'www.example.com')), ['192.0.2.2'], 'a change to another ConfigMap is not seen at all');
  });

  t.test('objects DNS cannot use are skipped with a metric', async (t) => {
    const before = metric(await metrics(kd), 'kubedns_cluster_objects_rejected_total{kind="EndpointSlice"}');
    await cluster.apply([svc('app', 'fq', { clusterIP: 'None', ports: [{ port: 80 }] }),
      slice('app', 'fq', 'fq-1', 'FQDN', [{ addresses: ['backend.example.com'], conditions: { ready: true } }]),
      svc('app', 'after', { ports: [{ port: 80 }] })]);
    const after = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/after'), 'get after');
    await served(kd, 'after.app.svc.cluster.local', 'A', [after.spec.clusterIP], 'objects after a bad one still arrive');
    await eventually(async () => metric(await metrics(kd), 'kubedns_cluster_objects_rejected_total{kind="EndpointSlice"}') > before, 'rejected counter moved', WAIT);
    t.match(kd.program.output(), /cluster object skipped kind=EndpointSlice .*addressType FQDN/);
  });

  t.test('a watch gone silent is restarted, and what changed meanwhile is served', async (t) => {
    const silentBefore = metric(await metrics(kd), 'kubedns_source_watch_restarts_total{kind="Service",reason="silent"}');
    const frozen = proxy.freeze();
    t.ok(frozen >= 2, `froze ${frozen} connections (the watches)`);
    await cluster.apply([svc('app', 'while-silent', { ports: [{ port: 80 }] })]);
    const s = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/while-silent'), 'get');
    await served(kd, 'while-silent.app.svc.cluster.local', 'A', [s.spec.clusterIP], 'served after the silent watch was replaced');
    t.ok(metric(await metrics(kd), 'kubedns_source_watch_restarts_total{kind="Service",reason="silent"}') > silentBefore, 'counted as a silent restart');
    t.match(kd.program.output(), /watch silent too long, restarting it kind=Service/);
  });

  t.test('an API server restart: answers keep coming, ready stays 200, changes after it are served', async (t) => {
    await cluster.apply([svc('app', 'doomed', { ports: [{ port: 80 }] }), svc('app', 'kept', { ports: [{ port: 80 }] })]);
    const kept = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/kept'), 'get kept');
    await served(kd, 'doomed.app.svc.cluster.local', 'A', [(await ok(cluster.request('GET', '/api/v1/namespaces/app/services/doomed'), 'get')).spec.clusterIP], 'before');
    const relistsBefore = metric(await metrics(kd), 'kubedns_source_relists_total{kind="Service"}');

    // Cut kube-dns off (its watches frozen, new connections refused), change things it cannot see,
    // and restart the API server, whose new watch cache has no history: resuming is answered 410.
    proxy.block(true);
    proxy.freeze();
    await ok(cluster.request('DELETE', '/api/v1/namespaces/app/services/doomed'), 'delete doomed');
    await cluster.apply([svc('app', 'born', { ports: [{ port: 80 }] })]);
    for (let i = 0; i < 5; i++) await cluster.apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bump-${i}`, namespace: 'default' }, data: { i: String(i) } }]);
    await cluster.stopApiServer();
    t.same(answers(await dig(kd.dnsPort, 'kept.app.svc.cluster.local')), [kept.spec.clusterIP], 'answers from the last known state while the API is down');
    t.equal((await fetch(`http://127.0.0.1:${kd.httpPort}/readiness`)).status, 200, 'still ready');
    await cluster.startApiServer();
    proxy.block(false);

    const born = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/born'), 'get born');
    await served(kd, 'born.app.svc.cluster.local', 'A', [born.spec.clusterIP], 'created while cut off');
    await served(kd, 'doomed.app.svc.cluster.local', 'A', 'NXDOMAIN', 'deleted while cut off: no leftover');
    await cluster.apply([svc('app', 'later', { ports: [{ port: 80 }] })]);
    const later = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/later'), 'get later');
    await served(kd, 'later.app.svc.cluster.local', 'A', [later.spec.clusterIP], 'a change after the restart');
    const m = await metrics(kd);
    const relists = metric(m, 'kubedns_source_relists_total{kind="Service"}');
    const expired = metric(m, 'kubedns_source_watch_restarts_total{kind="Service",reason="expired"}');
    t.comment(`relists ${relistsBefore} → ${relists}, expired restarts ${expired}`);
    t.ok(relists > relistsBefore, 'the 410 after the restart led to a relist');
    t.equal((await fetch(`http://127.0.0.1:${kd.httpPort}/readiness`)).status, 200);
    t.match(kd.program.output(), /cannot list\/watch Service, serving the last known state; retrying with backoff/);
    t.match(kd.program.output(), /API connection recovered kind=Service/);
  });

  t.test('an API server out of reach for 30 s: tried again every few seconds throughout, caught up once back', async (t) => {
    // A partition (every connection reset, new ones refused): a backoff grown to tens of seconds would
    // keep kube-dns on a stale state that long after the API server is reachable again.
    const logFrom = kd.program.output().length;
    proxy.block(true);
    proxy.cut();
    const from = performance.now();
    await cluster.apply([svc('app', 'while-away', { ports: [{ port: 80 }] })]);
    const away = await ok(cluster.request('GET', '/api/v1/namespaces/app/services/while-away'), 'get while-away');
    await new Promise((r) => setTimeout(r, 30_000));
    const until = performance.now();
    proxy.block(false);
    const tries = [from, ...proxy.refusedAt.filter((at) => at > from), until];
    const longest = Math.max(...tries.slice(1).map((at, i) => at - tries[i]));
    t.ok(longest < 9_000, `the longest time without a try: ${(longest / 1000).toFixed(1)} s (${tries.length - 2} tries in 30 s)`);
    await served(kd, 'while-away.app.svc.cluster.local', 'A', [away.spec.clusterIP], 'created while out of reach');
    const log = kd.program.output().slice(logFrom);
    t.equal(log.match(/cannot list\/watch Service/g)?.length, 1, 'one line for the outage, not one per try');
    t.equal(log.match(/API connection recovered kind=Service/g)?.length, 1, 'and one when it is over');
  });

  t.test('credentials the API server refuses: logged once per kind with the status, not ready, still running', async (t) => {
    const bad = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig('not-a-valid-token')}`], synced: false });
    await bad.program.waitFor(/cannot list\/watch Service, not synced yet; retrying with backoff kind=Service status=401/, WAIT);
    await bad.program.waitFor(/cannot list\/watch EndpointSlice, not synced yet; retrying with backoff kind=EndpointSlice status=401/, WAIT);
    // Several retries later (0.5 s, 1 s, 2 s...), still one line per kind.
    await new Promise((r) => setTimeout(r, 2500));
    t.equal(bad.program.output().match(/cannot list\/watch Service/g)?.length, 1, 'one line, not one per retry');
    t.equal((await fetch(`http://127.0.0.1:${bad.httpPort}/readiness`)).status, 503);
    t.equal((await dig(bad.dnsPort, 'web.app.svc.cluster.local')).status, 'SERVFAIL', 'no false NXDOMAIN before the first sync');
    t.equal(bad.program.child.exitCode, null, 'never crashes');
  });
});
