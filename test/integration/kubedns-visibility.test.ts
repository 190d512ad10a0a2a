// The kube-dns ConfigMap's `visibility` policy as pods meet it: the example cluster with pods of four
// namespaces at loopback addresses (dig -b), asking kube-dns directly, through the pod's dnscache
// (--add-subnet=32,128, denials cached) and through node-cache's engine (which names each pod to the
// cluster DNS). What a pod may not see is answered exactly as a name that does not exist, for every
// kind of record; what it may see is answered as without the policy; no cache hands one pod's answer
// to another; a change to the policy is in force within a second; without it nothing changes.

import t from 'tap';
import type { Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import type { KubeDns } from '../helpers/kubedns.ts';
import { freePort } from '../helpers/ports.ts';
import { sample, scrape } from '../helpers/sidecar.ts';
import { repoRoot, startProgram } from '../helpers/process.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { ZoneEngine } from '../../pkg/nodecache/engine.ts';
import { planCorefile } from '../../pkg/nodecache/plan.ts';

const CLUSTER = readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8');

/** The askers: a pod of each namespace at its own loopback address, and an address no pod has. */
const FRONTEND = '127.0.0.31';
const APPS = '127.0.0.32';
const DEFAULT = '127.0.0.33';
const MONITORING = '127.0.0.34';
const UNKNOWN = '127.0.0.35';
/** A second pod of default. */
const DEFAULT_TWO = '127.0.0.36';

const pod = (ns: string, ip: string) => `apiVersion: v1
kind: Pod
metadata: {name: client, namespace: ${ns}, uid: uid-${ns}}
spec: {}
status: {phase: Running, podIP: ${ip}}`;
const PODS = [pod('frontend', FRONTEND), pod('apps', APPS), pod('default', DEFAULT), pod('monitoring', MONITORING), pod('default', DEFAULT_TWO).replace('name: client', 'name: client-two').replace('uid-default', 'uid-default-two')];

const POLICY = '{"allow": {"frontend": ["apps"], "monitoring": ["*"]}, "unknownAskers": "deny"}';

/** The cluster file: the example cluster, the pods, and the kube-dns ConfigMap with `visibility` (none: no key). */
function clusterYaml(visibility: string | null): string {
  const data = visibility === null ? '{}' : `\n  visibility: '${visibility}'`;
  return yamlDocs(CLUSTER, ...PODS, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-dns-policy, namespace: kube-system}\ndata: ${data}`);
}

async function kubeDns(t: Test, visibility: string | null = POLICY): Promise<KubeDns> {
  return startKubeDns(t, { clusterYaml: clusterYaml(visibility), args: ['--config-map=kube-dns-policy'] });
}

/** What the answer says, TTLs and all (records in order: headless answers rotate), with the asked name taken out: a denial must read as a name that does not exist. */
const sorted = (records: DigResult['answer']) => records.map((r) => JSON.stringify(r)).sort();
const shape = (r: DigResult, name: string) => JSON.stringify({ status: r.status, flags: r.flags, answer: sorted(r.answer), authority: sorted(r.authority) }).replaceAll(name, '<name>');

/** [name, type, the namespace it belongs to] for every kind of record the zone answers. */
const RECORDS: [string, string][] = [
  ['web.default.svc.cluster.local', 'A'],
  ['web.default.svc.cluster.local', 'AAAA'],
  ['_http._tcp.web.default.svc.cluster.local', 'SRV'],
  ['db.default.svc.cluster.local', 'A'],
  ['db-0.db.default.svc.cluster.local', 'A'],
  ['search.default.svc.cluster.local', 'CNAME'],
  ['10-244-1-7.default.pod.cluster.local', 'A'],
  ['default.svc.cluster.local', 'A'],
];

t.test('asked directly: a name of another namespace reads as one that does not exist, for every kind of record', async (t) => {
  const kd = await kubeDns(t);
  const ask = (from: string, name: string, type = 'A') => dig(kd.dnsPort, name, type, ['-b', from]);
  for (const [name, type] of RECORDS) {
    const own = await ask(DEFAULT, name, type);
    t.equal(own.status, 'NOERROR', `${type} ${name}: its own namespace sees it`);
    t.same(shape(await ask(MONITORING, name, type), name), shape(own, name), `${type} ${name}: a namespace allowed "*" gets the same`);
    const missing = `nothing-${type.toLowerCase()}.${name}`;
    const nonexistent = await ask(FRONTEND, missing, type);
    t.equal(nonexistent.status, 'NXDOMAIN');
    t.same(shape(await ask(FRONTEND, name, type), name), shape(nonexistent, missing), `${type} ${name}: another namespace's pod gets what a name that does not exist gets`);
    t.same(shape(await ask(UNKNOWN, name, type), name), shape(nonexistent, missing), `${type} ${name}: an unknown asker, denied by the policy`);
  }
  t.equal((await ask(FRONTEND, 'legacy.apps.svc.cluster.local')).status, 'NOERROR', 'frontend is allowed apps');
  t.equal((await ask(APPS, 'legacy.apps.svc.cluster.local')).status, 'NOERROR');
  t.equal((await ask(DEFAULT, 'legacy.apps.svc.cluster.local')).status, 'NXDOMAIN', 'default is not');
  t.equal((await ask(APPS, 'frontend.svc.cluster.local')).status, 'NXDOMAIN', 'nor is apps allowed frontend: a namespace name hidden');
  t.equal((await ask(FRONTEND, 'kubernetes.default.svc.cluster.local')).status, 'NOERROR', 'the API server: shared unsaid');
  t.equal((await ask(FRONTEND, '_dns._udp.kube-dns.kube-system.svc.cluster.local', 'SRV')).status, 'NOERROR', 'kube-dns itself: shared unsaid');
  t.equal((await ask(FRONTEND, 'kube-system.svc.cluster.local')).status, 'NXDOMAIN', 'not the rest of kube-system');
});

t.test('reverse lookups: a Service or endpoint address of another namespace reads as an address of no Service', async (t) => {
  const kd = await kubeDns(t);
  const ptr = (from: string, ip: string) => dig(kd.dnsPort, '', 'PTR', ['-b', from, '-x', ip]);
  for (const [ip, what] of [['10.96.10.10', 'a ClusterIP'], ['10.244.1.20', 'an endpoint']]) {
    const own = await ptr(DEFAULT, ip);
    t.equal(own.status, 'NOERROR', `${what}: its namespace's pod gets its name`);
    t.match(own.answer[0]?.data, /\.default\.svc\.cluster\.local\.$/);
    const unused = await ptr(FRONTEND, '10.96.99.99');
    const hidden = await ptr(FRONTEND, ip);
    t.same([hidden.status, hidden.answer], [unused.status, unused.answer], `${what}: another namespace's pod gets what an unused address gets`);
  }
  t.equal((await ptr(FRONTEND, '10.96.0.1')).answer[0]?.data, 'kubernetes.default.svc.cluster.local.', 'a shared Service by its address');
});

t.test("no cache hands one pod's answer to another, in either order", async (t) => {
  const kd = await kubeDns(t);
  const ask = (from: string, name: string) => dig(kd.dnsPort, name, 'A', ['-b', from]);
  for (const name of ['web.default.svc.cluster.local', 'db-1.db.default.svc.cluster.local']) {
    t.equal((await ask(DEFAULT, name)).status, 'NOERROR');
    t.equal((await ask(DEFAULT, name)).status, 'NOERROR');
    t.equal((await ask(FRONTEND, name)).status, 'NXDOMAIN', `${name}: after the allowed pod asked`);
    t.equal((await ask(DEFAULT, name)).status, 'NOERROR', `${name}: after the denied pod asked`);
  }
});

t.test("asked directly, an answer is kept for its asker's namespace: another pod of it is answered from the cache, a pod of another namespace is not", async (t) => {
  const kd = await kubeDns(t);
  const hits = async () => sample(await scrape(kd.httpPort), 'kubedns_dns_answer_cache_hits_total');
  const ask = (from: string) => dig(kd.dnsPort, 'web.default.svc.cluster.local', 'A', ['-b', from]).then((r) => r.status);
  t.equal(await ask(DEFAULT), 'NOERROR');
  // With threads (npm run test:threads) each has its own cache and the kernel picks one per asker's
  // address and port; a thread learns a pod's namespace from its first miss (pkg/dnsthreads
  // askers.ts). Asked enough that every thread holds the answer and knows the second pod (one left
  // out: 2^-15 at two threads).
  for (let i = 0; i < 16; i++) {
    await ask(DEFAULT);
    await dig(kd.dnsPort, 'db.default.svc.cluster.local', 'A', ['-b', DEFAULT_TWO]);
  }
  const before = await hits();
  t.equal(await ask(DEFAULT_TWO), 'NOERROR');
  t.equal(await hits(), before + 1, "default's second pod: from the cache");
  t.equal(await ask(FRONTEND), 'NXDOMAIN', 'frontend: not from it');
  t.equal(await ask(FRONTEND), 'NXDOMAIN');
  t.equal(await hits(), before + 1, "a denial reads as a missing name: never a per-name cache entry, whoever asks");
  t.equal(await ask(MONITORING), 'NOERROR');
  t.equal(await hits(), before + 1, "monitoring's first ask: its own entry, not default's");
});

t.test('--workers=2: an address taken over by a pod of another namespace gets its namespace\'s answers from every thread, none kept for the old one', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: clusterYaml(POLICY), args: ['--config-map=kube-dns-policy', '--workers=2'] });
  // Random source ports: the kernel spreads them over both threads (one left out: 2^-15).
  const statuses = async (from: string) => {
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) seen.add((await dig(kd.dnsPort, 'web.default.svc.cluster.local', 'A', ['-b', from])).status);
    return [...seen];
  };
  t.same(await statuses(DEFAULT_TWO), ['NOERROR'], "default's pod: every thread answers it, and keeps the answer");
  writeFileSync(kd.clusterFile, clusterYaml(POLICY).replace('namespace: default, uid: uid-default-two', 'namespace: frontend, uid: uid-frontend-two'));
  await kd.program.waitFor(/loaded cluster file .*deleted=1/);
  t.same(await statuses(DEFAULT_TWO), ['NXDOMAIN'], 'the same address in frontend: denied by every thread');
  t.same(await statuses(DEFAULT), ['NOERROR'], "default's other pod: still answered");
});

t.test('through the pod dnscache (--add-subnet=32,128, denials kept): each pod gets its own answer', async (t) => {
  const kd = await kubeDns(t);
  const cache = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', `--server=/cluster.local/127.0.0.1#${kd.dnsPort}`, `--server=/in-addr.arpa/127.0.0.1#${kd.dnsPort}`, '--add-subnet=32,128', '--log-facility=-']);
  const port = Number((await cache.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
  await throughACache(t, port, kd);
});

t.test("through node-cache (the cluster's zones forwarded to kube-dns with each pod's address): each pod gets its own answer", async (t) => {
  const kd = await kubeDns(t);
  const port = await freePort();
  const zone = (z: string) => `${z}:${port} {\n  bind 127.0.0.1\n  cache {\n    success 9984 30\n    denial 9984 5\n  }\n  forward . 127.0.0.1:${kd.dnsPort} {\n    force_tcp\n  }\n}\n`;
  const engine = new ZoneEngine(planCorefile(parseCorefile(zone('cluster.local') + zone('in-addr.arpa')), { defaultPort: port }), createLogger('test/node-cache'), { askersTo: '127.0.0.1' });
  await engine.start();
  t.teardown(() => engine.stop());
  await throughACache(t, port, kd);
});

/** The queries kube-dns has answered so far (its kubedns_dns_request_duration_seconds count, every label). */
async function kubeDnsRequests(kd: KubeDns): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${kd.httpPort}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('kubedns_dns_request_duration_seconds_count')).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function throughACache(t: Test, port: number, kd: KubeDns): Promise<void> {
  const ask = (from: string, name: string, type = 'A', extra: string[] = []) => dig(port, name, type, ['-b', from, ...extra]);
  for (const [name, type] of RECORDS) {
    t.equal((await ask(FRONTEND, name, type)).status, 'NXDOMAIN', `${type} ${name}: denied first`);
    t.equal((await ask(DEFAULT, name, type)).status, 'NOERROR', `${type} ${name}: then its own namespace's pod is answered`);
    const asked = await kubeDnsRequests(kd);
    t.equal((await ask(DEFAULT, name, type)).status, 'NOERROR', `${type} ${name}: again`);
    t.equal(await kubeDnsRequests(kd), asked, `${type} ${name}: again from the cache's store for that pod`);
    t.equal((await ask(FRONTEND, name, type)).status, 'NXDOMAIN', `${type} ${name}: and the other pod still denied`);
  }
  t.equal((await ask(FRONTEND, '', 'PTR', ['-x', '10.96.10.10'])).answer.length, 0, 'a hidden address: no name');
  t.equal((await ask(DEFAULT, '', 'PTR', ['-x', '10.96.10.10'])).answer[0]?.data, 'web.default.svc.cluster.local.', 'its own: the name');
  t.equal((await ask(FRONTEND, 'legacy.apps.svc.cluster.local')).status, 'NOERROR', 'an allowed namespace through the cache');
}

t.test('a policy change is in force within a second; an invalid one is rejected and the last kept; none: every answer as before', async (t) => {
  const kd = await kubeDns(t, null);
  const ask = (from: string, name: string) => dig(kd.dnsPort, name, 'A', ['-b', from]);
  const web = 'web.default.svc.cluster.local';
  t.equal((await ask(FRONTEND, web)).status, 'NOERROR', 'no policy: every pod sees every name');
  t.equal((await ask(UNKNOWN, web)).status, 'NOERROR');
  const apply = async (visibility: string | null, from: string, status: string, what: string) => {
    writeFileSync(kd.clusterFile, clusterYaml(visibility));
    const started = performance.now();
    await eventually(async () => (await ask(from, web)).status === status, what, 1000);
    t.pass(`${what} (${Math.round(performance.now() - started)} ms)`);
  };
  await apply(POLICY, FRONTEND, 'NXDOMAIN', 'the policy in force: frontend denied default');
  await apply('{"allow": {"frontend": ["default"]}}', FRONTEND, 'NOERROR', 'changed: frontend allowed default');
  writeFileSync(kd.clusterFile, clusterYaml('{"allow": {"frontend": "everything"}}'));
  await kd.program.waitFor(/invalid configuration, ignoring update .*key="?visibility/);
  t.equal((await ask(FRONTEND, web)).status, 'NOERROR', 'an invalid policy: the last good one kept');
  await apply(null, APPS, 'NOERROR', 'the key removed: no policy');
});
