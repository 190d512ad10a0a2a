// --autopath through the pod's two DNS programs as they run: kube-dns (cluster file with Pods) behind
// dnscache --add-subnet=32,128, a real dnsmasq as the world's DNS, and dig asking from the pods'
// addresses (loopback addresses stand in for pod IPs: -b 127.0.0.x). The first candidate of a pod's
// search walk is answered with the end of the walk, for that pod only; everyone else gets today's
// answers.

import t from 'tap';
import type { Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answers, dig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import { repoRoot, startProgram } from '../helpers/process.ts';
import { freePort } from '../helpers/ports.ts';
import { sample, scrape } from '../helpers/sidecar.ts';
import { blackhole } from '../helpers/upstreams.ts';

const CLUSTER = readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8');

const pod = (ns: string, name: string, ip: string, spec = '{}') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}, uid: uid-${name}}
spec: ${spec}
status: {phase: Running, podIP: ${ip}}`;

/** The askers: pods of namespace apps, each at its own loopback address. */
const APPS = '127.0.0.21';
const OWN_SEARCH = '127.0.0.22';
const HOST_NETWORK = '127.0.0.23';
const REUSED = '127.0.0.24';
const UNKNOWN = '127.0.0.25';
const PROD = '127.0.0.26';

const PODS = [
  pod('apps', 'client', APPS),
  pod('apps', 'own-search', OWN_SEARCH, '{dnsConfig: {searches: [corp.example]}}'),
  pod('apps', 'on-host', HOST_NETWORK, '{hostNetwork: true, dnsPolicy: ClusterFirstWithHostNet}'),
  pod('apps', 'old', REUSED),
  pod('prod', 'new', REUSED), // the same address in another namespace: ambiguous
  pod('prod', 'worker', PROD),
];

/** The world's DNS: a real dnsmasq, or (for the faults) a given port on 127.0.0.1. */
/** `negcache`: dnscache keeps denials too (node-cache's `denial`), where the manifest's passes --no-negcache. */
async function startPod(t: Test, autopath = '--autopath', worldPort?: number, negcache = false) {
  const world = worldPort === undefined ? await startDnsmasq(t, ['192.0.2.10 api.example.com'], ['--local-ttl=60']) : { port: worldPort };
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(CLUSTER, ...PODS), args: [autopath, `--nameservers=127.0.0.1:${world.port}`] });
  const cache = startProgram(t, 'dnscache', [
    '-k',
    '--port=0',
    '--listen-address=127.0.0.1',
    '--no-resolv',
    ...(negcache ? [] : ['--no-negcache']),
    `--server=/cluster.local/127.0.0.1#${kd.dnsPort}`,
    `--server=127.0.0.1#${world.port}`,
    '--add-subnet=32,128',
    '--log-facility=-',
  ]);
  const port = Number((await cache.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
  const ask = (from: string, name: string, type = 'A', extra: string[] = []): Promise<DigResult> => dig(port, name, type, ['-b', from, ...extra]);
  return { kd, port, ask };
}

const records = (r: DigResult) => r.answer.map((a) => `${a.name} ${a.type} ${a.data}`).sort();

t.test("a pod's first candidate is answered with the end of its walk; the records are the found name's", async (t) => {
  const { ask } = await startPod(t);
  const db = await ask(APPS, 'db.default.apps.svc.cluster.local');
  t.equal(db.status, 'NOERROR');
  const direct = await ask(APPS, 'db.default.svc.cluster.local');
  t.same(records(db), [...records(direct), 'db.default.apps.svc.cluster.local. CNAME db.default.svc.cluster.local.'].sort(), 'a CNAME to the name found, then its records');
  const noAAAA = await ask(APPS, 'db.default.apps.svc.cluster.local', 'AAAA');
  t.equal(noAAAA.status, 'NOERROR', 'AAAA: the name exists without AAAA records');
  t.same(answers(noAAAA), ['db.default.svc.cluster.local.']);
  const outside = await ask(APPS, 'api.example.com.apps.svc.cluster.local');
  t.same(records(outside), ['api.example.com. A 192.0.2.10', 'api.example.com.apps.svc.cluster.local. CNAME api.example.com.'], 'the last step, upstream');
  const kube = await ask(APPS, 'kubernetes.default.apps.svc.cluster.local');
  t.same(answers(kube, 'A'), ['10.96.0.1']);
  t.equal((await ask(APPS, 'nothing.apps.svc.cluster.local')).status, 'NXDOMAIN', 'a walk ending in NXDOMAIN: NXDOMAIN, the client walks on');
  t.same(answers(await ask(APPS, 'legacy.apps.svc.cluster.local')), ['10.244.3.40', '10.244.3.41'], 'a first candidate that exists is answered as always');
  const plain = await ask(APPS, 'kubernetes.default.apps.svc.cluster.local', 'A', ['+noedns']);
  t.same(answers(plain, 'A'), ['10.96.0.1'], 'a query without EDNS (as glibc and musl send) gets it too');
  t.equal(plain.edns, null, 'and no OPT back');
  const edns = await ask(APPS, 'db.default.apps.svc.cluster.local', 'A', ['+cookie']);
  t.equal(edns.status, 'NOERROR');
  t.notMatch(edns.raw, /CLIENT-SUBNET/, 'the address dnscache added is not shown to the asker');
});

t.test('everyone else gets what they got without autopath', async (t) => {
  const { ask } = await startPod(t);
  const name = 'db.default.apps.svc.cluster.local';
  for (const [who, from] of [
    ['its own search list', OWN_SEARCH],
    ['host network', HOST_NETWORK],
    ['an address two namespaces claim', REUSED],
    ['not a known pod', UNKNOWN],
    ['a pod of another namespace', PROD],
  ]) {
    const r = await ask(from, name);
    t.equal(r.status, 'NXDOMAIN', who);
  }
  t.equal((await ask(APPS, 'db.default.prod.svc.cluster.local')).status, 'NXDOMAIN', "another namespace's first candidate");
  const claim = await ask(PROD, name, 'A', [`+subnet=${APPS}/32`]);
  t.equal(claim.status, 'NXDOMAIN', "a pod claiming another pod's address: dnscache sends the real one");
});

t.test('an answer for one pod is never served to another asker, from either cache', async (t) => {
  const { kd, ask } = await startPod(t);
  const name = 'api.example.com.apps.svc.cluster.local';
  t.equal((await ask(APPS, name)).status, 'NOERROR');
  t.equal((await ask(APPS, name)).status, 'NOERROR', 'again (kept for this pod)');
  t.equal((await ask(UNKNOWN, name)).status, 'NXDOMAIN', 'the same name from another address');
  t.equal((await ask(PROD, name)).status, 'NXDOMAIN');
  const m = await scrape(kd.httpPort);
  t.equal(sample(m, 'kubedns_autopath_first_candidates_total{outcome="upstream"}'), 1, 'the second answer for the pod came from dnscache');
  t.equal(sample(m, 'kubedns_autopath_first_candidates_total{outcome="unknown-client"}'), 1);
  t.equal(sample(m, 'kubedns_autopath_pods'), 4, 'addresses: client, own-search (known, not answered for: its walk is not the kubelet\'s), old/new (one, ambiguous), worker');
  t.ok(sample(m, 'kubedns_autopath_index_bytes') > 0);
});

t.test("another asker's NXDOMAIN for a pod's first candidate is kept for that asker alone, by a cache that keeps denials", async (t) => {
  const { ask } = await startPod(t, '--autopath', undefined, true);
  const name = 'db.default.apps.svc.cluster.local';
  t.equal((await ask(UNKNOWN, name)).status, 'NXDOMAIN', 'not a known pod: NXDOMAIN');
  t.equal((await ask(UNKNOWN, name)).status, 'NXDOMAIN', 'again, from the cache');
  t.equal((await ask(APPS, name)).status, 'NOERROR', "the pod of apps: its walk's end, not the other's denial");
  t.equal((await ask(PROD, 'nothing.default.prod.svc.cluster.local')).status, 'NXDOMAIN');
});

t.test('--autopath=false: every first candidate answered as without autopath', async (t) => {
  const { kd, ask } = await startPod(t, '--autopath=false');
  t.equal((await ask(APPS, 'db.default.apps.svc.cluster.local')).status, 'NXDOMAIN');
  t.equal((await ask(APPS, 'api.example.com.apps.svc.cluster.local')).status, 'NXDOMAIN');
  const m = await scrape(kd.httpPort);
  t.notOk([...m.keys()].some((k) => k.startsWith('kubedns_autopath_')), 'no autopath metrics');
});

t.test("an upstream that does not answer: a pod's missing name is NXDOMAIN, as without autopath", async (t) => {
  // The walk's last step (`nosuch.`) goes upstream; dnscache gives up on kube-dns after 2 s, so a walk
  // that waits longer turns the client's NXDOMAIN into SERVFAIL. dig waits 5 s: past dnscache's timeout.
  const faults: [string, () => Promise<number>][] = [
    ['a closed port (ICMP port unreachable)', () => freePort()],
    ['one that drops every query', async () => (await blackhole(t)).port],
  ];
  for (const [fault, port] of faults) {
    const upstream = await port();
    for (const mode of ['--autopath', '--autopath=false']) {
      const { ask } = await startPod(t, mode, upstream);
      const r = await ask(APPS, 'nosuch.apps.svc.cluster.local', 'A', ['+time=5']);
      t.equal(r.status, 'NXDOMAIN', `${fault}, ${mode}`);
    }
  }
});

t.test('once the upstream step went unanswered, the next walks skip it for a while', async (t) => {
  const silent = await blackhole(t);
  const { kd, ask } = await startPod(t, '--autopath', silent.port);
  t.equal((await ask(APPS, 'first.apps.svc.cluster.local', 'A', ['+time=5'])).status, 'NXDOMAIN');
  t.equal(silent.ids.length, 1, 'the first walk asked upstream');
  t.equal((await ask(APPS, 'second.apps.svc.cluster.local', 'A', ['+time=5'])).status, 'NXDOMAIN');
  t.equal(silent.ids.length, 1, 'the second did not');
  const m = await scrape(kd.httpPort);
  t.equal(sample(m, 'kubedns_autopath_first_candidates_total{outcome="upstream-silent"}'), 2);
  t.equal(sample(m, 'kubedns_autopath_first_candidates_total{outcome="failed"}'), 0);
});
