// The addon from manifests/ on a real single-node cluster (test/cluster/harness), deployed as the README
// tells users, asked by real pods through the kube-dns Service's ClusterIP: every record kind over UDP
// and TCP, a Service created while it runs, autopath from a real pod counted at the pods' dnscache, a
// stubDomains edit of the kube-dns ConfigMap reaching dnscache through the kubelet's ConfigMap volume,
// the sidecar's health checks and metrics through the pod IPs, the readiness probe failing and passing
// again; once with kube-proxy in iptables mode and once in nftables mode.

import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import type { Test } from 'tap';
import { parseDig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { BENCH_NAMES, clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import type { NodeCluster } from './harness/cluster.ts';
import { deployAddon, execIn, startClientPod, waitFor } from './harness/addon.ts';
import { NET } from './harness/node-config.ts';
import type { ProxyMode } from './harness/node-config.ts';

// A cluster takes minutes and runs one at a time (the harness's lock): past tap's per-file timeout.
t.setTimeout(25 * 60_000);

const NS = 'default';
const CLIENT = 'client';

/** dig from the client pod, through the nameserver of its resolv.conf (the kube-dns Service). */
async function dig(c: NodeCluster, args: string[]): Promise<DigResult> {
  return parseDig(await execIn(c, NS, CLIENT, ['dig', '+tries=1', '+time=3', ...args]));
}

const data = (r: DigResult, type?: string) => r.answer.filter((a) => type === undefined || a.type === type).map((a) => a.data).sort();

/** The objects the record checks ask for: a ClusterIP and a headless Service over the client pod, an ExternalName. */
async function createServices(c: NodeCluster): Promise<void> {
  const port = [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }];
  await c.apply([
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { selector: { app: CLIENT }, ports: port } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web-headless', namespace: NS }, spec: { clusterIP: 'None', selector: { app: CLIENT }, ports: port } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: NS }, spec: { type: 'ExternalName', externalName: 'outside.example' } },
  ]);
}

async function recordKinds(t: Test, c: NodeCluster): Promise<void> {
  const web = (await c.request('GET', `/api/v1/namespaces/${NS}/services/web`)).body.spec.clusterIP as string;
  const podIp = (await c.request('GET', `/api/v1/namespaces/${NS}/pods/${CLIENT}`)).body.status.podIP as string;
  // The headless Service's endpoints come from the EndpointSlice controller a moment after the pod runs.
  await waitFor('the headless service answered', async () => data(await dig(c, ['web-headless.default.svc.cluster.local'])).includes(podIp), 30_000);
  for (const transport of ['+notcp', '+tcp']) {
    const ask = (...args: string[]) => dig(c, [transport, ...args]);
    t.same(data(await ask('web.default.svc.cluster.local'), 'A'), [web], `${transport} A of a ClusterIP Service`);
    const aaaa = await ask('web.default.svc.cluster.local', 'AAAA');
    t.same([aaaa.status, aaaa.answer.length], ['NOERROR', 0], `${transport} AAAA of an IPv4 Service: NODATA`);
    t.same(data(await ask('_http._tcp.web.default.svc.cluster.local', 'SRV')), ['10 100 80 web.default.svc.cluster.local.'], `${transport} SRV of a named port: the Service's port`);
    t.same(data(await ask('web-headless.default.svc.cluster.local'), 'A'), [podIp], `${transport} A of a headless Service: its endpoint`);
    t.same(data(await ask('_http._tcp.web-headless.default.svc.cluster.local', 'SRV')), [`10 100 8080 ${podIp.replaceAll('.', '-')}.web-headless.default.svc.cluster.local.`], `${transport} SRV of a headless Service: per endpoint, its port`);
    t.same(data(await ask('-x', web)), ['web.default.svc.cluster.local.'], `${transport} PTR of a ClusterIP`);
    t.match(data(await ask('-x', podIp)), [/\.web-headless\.default\.svc\.cluster\.local\.$/], `${transport} PTR of an endpoint`);
    const ext = await ask('ext.default.svc.cluster.local');
    t.same(data(ext, 'CNAME'), ['outside.example.'], `${transport} CNAME of an ExternalName`);
    t.same(data(ext, 'A'), ['192.0.2.10'], `${transport} and its target's A, from the node's resolver`);
    t.same(data(await ask(`${podIp.replaceAll('.', '-')}.default.pod.cluster.local`), 'A'), [podIp], `${transport} A of a pod's dashed name`);
    t.equal((await ask('nosuch.default.svc.cluster.local')).status, 'NXDOMAIN', `${transport} a name that does not exist`);
  }
}

async function serviceCreatedWhileRunning(t: Test, c: NodeCluster): Promise<void> {
  const started = Date.now();
  await c.apply([{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'late', namespace: NS }, spec: { selector: { app: 'none' }, ports: [{ port: 80 }] } }]);
  const ip = (await c.request('GET', `/api/v1/namespaces/${NS}/services/late`)).body.spec.clusterIP as string;
  await waitFor('the new Service answered', async () => data(await dig(c, ['late.default.svc.cluster.local'])).includes(ip), 10_000);
  const ms = Date.now() - started;
  t.comment(`a Service created while the addon runs: answered ${ms} ms after its create call (each try a kubectl exec)`);
  t.pass('a Service created while the addon runs is answered');
}

/** The kube-dns pods: name, IP, uid. */
async function dnsPods(c: NodeCluster): Promise<{ name: string; ip: string; uid: string }[]> {
  const list = (await c.request('GET', '/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns')).body.items as any[];
  return list.map((p) => ({ name: p.metadata.name, ip: p.status.podIP, uid: p.metadata.uid }));
}

/** dnscache's cache misses (CHAOS misses.bind), summed over the kube-dns pods, asked at each pod's IP. */
async function dnscacheMisses(c: NodeCluster): Promise<number> {
  let sum = 0;
  for (const pod of await dnsPods(c)) {
    const r = await dig(c, [`@${pod.ip}`, '-c', 'CH', '-t', 'TXT', 'misses.bind']);
    const m = /"(\d+)"/.exec(r.answer[0]?.data ?? '');
    if (m === null) throw new Error(`misses.bind from ${pod.name}:\n${r.raw}`);
    sum += Number(m[1]);
  }
  return sum;
}

/**
 * glibc's and musl's getaddrinfo from the pod for names outside the cluster, each new (so each query
 * is a miss at dnscache): with autopath a lookup costs one query per family instead of the search
 * list's eight.
 */
async function autopathFromAPod(t: Test, c: NodeCluster): Promise<void> {
  for (const libc of ['glibc', 'musl']) {
    const before = await dnscacheMisses(c);
    const names = BENCH_NAMES.filter((name) => name.startsWith(libc));
    const out = await execIn(c, NS, CLIENT, [`lookup-${libc}`, ...names]);
    t.equal(out.trim().split('\n').filter((l) => / 192\.0\.2\.20$/.test(l)).length, names.length, `${libc}: every name resolved, through the search list`);
    const perLookup = ((await dnscacheMisses(c)) - before) / names.length;
    t.comment(`${libc}: queries per lookup at the pods' dnscache: ${perLookup} (8 without autopath)`);
    t.ok(perLookup >= 2 && perLookup < 3, `${libc}: one query per family (${perLookup} a lookup; the sidecars' probes may add a few)`);
  }
}

/** A stubDomains edit of the kube-dns ConfigMap reaches dnscache through the kubelet's ConfigMap volume. */
async function stubDomainEdit(t: Test, c: NodeCluster): Promise<void> {
  t.equal((await dig(c, ['db.corp.example'])).status, 'NXDOMAIN', 'before: the world does not know db.corp.example');
  const started = Date.now();
  await c.request('PATCH', '/api/v1/namespaces/kube-system/configmaps/kube-dns', { data: { stubDomains: JSON.stringify({ 'corp.example': [NET.stubIp] }) } });
  await waitFor('the stub domain answered', async () => data(await dig(c, ['db.corp.example'])).includes('192.0.2.30'), 120_000);
  t.comment(`stubDomains edit answered through the stub server ${Date.now() - started} ms after the PATCH`);
  t.pass('after: answered by the stub domain\'s server');
}

/** The sidecar's health checks and metrics, through each pod's IP as a kubelet or Prometheus reach them. */
async function sidecarThroughPodIp(t: Test, c: NodeCluster): Promise<void> {
  for (const pod of await dnsPods(c)) {
    for (const path of ['/healthcheck/kubedns', '/healthcheck/dnsmasq']) {
      const code = await execIn(c, NS, CLIENT, ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `http://${pod.ip}:10054${path}`]);
      t.equal(code, '200', `${pod.name} ${path}`);
    }
    const metrics = await execIn(c, NS, CLIENT, ['curl', '-s', `http://${pod.ip}:10054/metrics`]);
    t.match(metrics, /^kubedns_probe_kubedns_latency_ms_count(\{[^}]*\})? [1-9]/m, `${pod.name}: the sidecar's probe of kube-dns, counted`);
    t.match(metrics, /^kubedns_dnsmasq_hits \d+/m, `${pod.name}: dnscache's statistics`);
  }
}

/** The host's pid of a pod's kube-dns process, found by its command line and its cgroup (the pod's uid). */
function kubeDnsPid(uid: string): number {
  const podCgroup = `pod${uid}`;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/cmd/kube-dns/main.js')) continue;
      if (readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(podCgroup)) return Number(pid);
    } catch {
      // gone
    }
  }
  throw new Error(`no kube-dns process in pod ${uid}`);
}

const podCondition = async (c: NodeCluster, name: string) => {
  const p = (await c.request('GET', `/api/v1/namespaces/kube-system/pods/${name}`)).body;
  const kubedns = p.status.containerStatuses.find((s: any) => s.name === 'kubedns');
  return { ready: p.status.conditions.some((x: any) => x.type === 'Ready' && x.status === 'True'), restarts: kubedns.restartCount as number };
};

/**
 * The manifest's probes fail when they should: kube-dns stopped (SIGSTOP) in one pod turns it unready
 * (its /readiness times out) while the Service keeps answering from the other, then the sidecar's
 * /healthcheck/kubedns fails the liveness probe and the kubelet restarts the container; ready again.
 */
async function probesFailAndRecover(t: Test, c: NodeCluster): Promise<void> {
  const [pod] = await dnsPods(c);
  const before = await podCondition(c, pod.name);
  t.ok(before.ready, `${pod.name} ready`);
  process.kill(kubeDnsPid(pod.uid), 'SIGSTOP');
  await waitFor(`${pod.name} unready`, async () => !(await podCondition(c, pod.name)).ready, 90_000);
  t.pass('readiness probe failed: the pod is unready');
  t.equal((await dig(c, ['kubernetes.default.svc.cluster.local'])).status, 'NOERROR', 'the Service answers from the other pod meanwhile');
  await waitFor(`${pod.name} kubedns restarted by its liveness probe`, async () => (await podCondition(c, pod.name)).restarts > before.restarts, 180_000);
  t.pass('liveness probe (the sidecar\'s /healthcheck/kubedns) failed: the container was restarted');
  await waitFor(`${pod.name} ready again`, async () => (await podCondition(c, pod.name)).ready, 120_000);
  t.pass('ready again');
}

t.test('the addon answers pods through the ClusterIP', async (t) => {
  for (const mode of ['iptables', 'nftables'] as ProxyMode[]) {
    await t.test(`kube-proxy ${mode}`, async (t) => {
      if (!clusterCanRun(t)) return;
      const c = await startNodeCluster(t, { proxyMode: mode });
      await deployAddon(c);
      await startClientPod(c, NS, CLIENT, { app: CLIENT });
      const resolv = await execIn(c, NS, CLIENT, ['cat', '/etc/resolv.conf']);
      t.match(resolv, `nameserver ${NET.dnsServiceIp}`, "the kubelet's resolv.conf names the Service");
      await createServices(c);
      await recordKinds(t, c);
      await serviceCreatedWhileRunning(t, c);
      await autopathFromAPod(t, c);
      await sidecarThroughPodIp(t, c);
      await stubDomainEdit(t, c);
      // Slow (about two minutes of probe periods): once, in the first mode.
      if (mode === 'iptables') await probesFailAndRecover(t, c);
    });
  }
});
