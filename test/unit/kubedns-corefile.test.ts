// kube-dns given a Corefile (CoreDNS's -conf): what the Corefiles clusters ship make of it (kubeadm's
// as the baseline, and its kin from ../shared/reference/corefiles.md), and every line it does not
// serve refused at its line.

import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { kubeDnsCorefile } from '../../pkg/kubedns/corefile.ts';
import { corefileConfig } from '../../pkg/kubedns/corefile-sync.ts';
import { kubeadmCorefile } from '../e2e/harness/manifests.ts';

const ctx = { defaultPort: 53, resolvServers: () => [{ host: '10.200.0.1', port: 53 }] };
const plan = (text: string) => kubeDnsCorefile(parseCorefile(text), ctx);

/** kubeadm v1.36's Corefile, as it writes it into ConfigMap coredns. */
const KUBEADM_COREFILE = kubeadmCorefile();

t.test("kubeadm's Corefile: the cluster zone, the pods, the TTL, the endpoints, the resolv.conf upstream, a 30 s cache", async (t) => {
  const k = plan(KUBEADM_COREFILE);
  t.match(k, {
    domain: 'cluster.local', ttl: 30, pods: 'insecure', port: 53, bind: null, upstreams: ['10.200.0.1:53'], forwarding: { maxInFlight: 1000, forceTcp: false, policy: 'random', health: { maxFails: 2, checkMs: 500 }, tcpIdleMs: 10_000 },
    cache: { successTtl: 30, denialTtl: 30, successCapacity: 9984 }, loop: true, roundRobin: true,
    health: { address: ':8080', lameDuckMs: 5000 }, ready: ':8181', metrics: ':9153', reloadMs: 30_000, kubeconfig: null, endpoint: null,
  });
  t.same([...k.stubDomains], []);
});

t.test("the others' defaults: CoreDNS's TTL (5 s) and pods disabled when unsaid; a stub block; a port of its own; an upstream list", async (t) => {
  const eks = plan('.:53 {\n  errors\n  health\n  kubernetes cluster.local in-addr.arpa ip6.arpa {\n    fallthrough in-addr.arpa ip6.arpa\n  }\n  prometheus :9153\n  forward . /etc/resolv.conf\n  cache 30\n  loop\n  reload\n}\n');
  t.match(eks, { ttl: 5, pods: 'disabled', roundRobin: false, health: { address: ':8080', lameDuckMs: 0 }, ready: null });
  const openshift = plan('.:5353 {\n  kubernetes cluster.local in-addr.arpa ip6.arpa {\n    pods insecure\n    fallthrough in-addr.arpa ip6.arpa\n  }\n  forward . 10.0.0.1 10.0.0.2:5353\n}\ncorp.example:5353 {\n  errors\n  forward . 10.1.0.1\n}\n');
  t.equal(openshift.port, 5353);
  t.same(openshift.upstreams, ['10.0.0.1:53', '10.0.0.2:5353']);
  t.same([...openshift.stubDomains], [['corp.example', ['10.1.0.1:53']]]);
  t.match(plan('.:53 {\n  kubernetes cluster.local\n  reload 10s\n  bind 127.0.0.1\n}\n'), { reloadMs: 10_000, bind: '127.0.0.1', upstreams: [] });
});

t.test("k3s's hosts: the NodeHosts file, its TTL, reload and fallthrough; inline lines (minikube's)", async (t) => {
  const k3s = plan('.:53 {\n  kubernetes cluster.local\n  hosts /etc/coredns/NodeHosts {\n    ttl 60\n    reload 15s\n    fallthrough\n  }\n}\n');
  t.same(k3s.hosts, { file: '/etc/coredns/NodeHosts', zones: [''], inline: [], ttl: 60, noReverse: false, reloadMs: 15_000, fallthrough: [''] });
  const minikube = plan('.:53 {\n  kubernetes cluster.local\n  hosts {\n    192.168.49.1 host.minikube.internal\n    fallthrough\n  }\n}\n');
  t.match(minikube.hosts, { file: '/etc/hosts', inline: ['192.168.49.1 host.minikube.internal'], ttl: 3600, reloadMs: 5000 });
  t.throws(() => plan('.:53 {\n  kubernetes cluster.local\n  hosts {\n    fallthrough_unsupported\n  }\n}\n'), { message: /^Corefile line 4: hosts option `fallthrough_unsupported` is not served/ });
  t.throws(() => plan('cluster.local {\n  kubernetes cluster.local\n}\n. {\n  hosts\n  forward . 1.1.1.1\n}\n'), { message: /^Corefile line 4: hosts in the block of \. apart from kubernetes'/ });
});

t.test('what kube-dns does not serve yet is refused at its line', async (t) => {
  const cases: [string, RegExp][] = [
    ['.:53 {\n  kubernetes cluster.local {\n    ignore empty_service\n  }\n}\n', /^Corefile line 3: kubernetes option `ignore empty_service` is not served/],
    ['.:53 {\n  kubernetes cluster.local {\n    noendpoints now\n  }\n}\n', /^Corefile line 3: kubernetes option `noendpoints now` is not served/],
    ['.:53 {\n  kubernetes cluster.local in-addr.arpa\n}\n', /^Corefile line 1: the reverse zone in-addr\.arpa without `fallthrough in-addr\.arpa`/],
    ['.:53 {\n  kubernetes cluster.local 10.0.0.0/8\n}\n', /^Corefile line 1: the reverse zone 10\.in-addr\.arpa without `fallthrough 10\.in-addr\.arpa`/],
    ['.:53 {\n  kubernetes cluster.local example.org\n}\n', /^Corefile line 1: kubernetes for cluster\.local example\.org \(kube-dns serves one cluster zone\)/],
    ['.:53 {\n  forward . 1.1.1.1\n}\n', /^Corefile line 1: kube-dns serves one `kubernetes`/],
    ['.:53 {\n  kubernetes cluster.local\n}\nexample.org:5353 {\n  forward . 1.1.1.1\n}\n', /^Corefile line 4: a second port \(5353; the cluster's block is on 53\)/],
    ['.:53 {\n  kubernetes cluster.local\n}\nexample.org {\n  cache 30\n  forward . 1.1.1.1\n}\n', /^Corefile line 4: a cache in the block of example\.org other than the root's/],
    ['.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1\n}\ncorp.example {\n  cache 30 corp.example\n  forward . 10.1.0.1\n}\n', /^Corefile line 5: a cache in the block of corp\.example other than the root's/],
    ['.:53 {\n  kubernetes cluster.local\n  rewrite type ANY HINFO\n}\n', /^Corefile line 3: a rewrite rule of the type field is not served/],
    ['.:53 {\n  kubernetes cluster.local\n  loadbalance weighted /x\n}\n', /^Corefile line 3: loadbalance `weighted \/x` is not served/],
    ['.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1 {\n    except .\n  }\n}\n', /^Corefile line 4: except: `\.` leaves nothing to forward/],
    ['.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1 {\n    except\n  }\n}\n', /^Corefile line 4: forward option `except` is not served/],
    ['.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1 {\n    health_check 1s no_rec\n  }\n}\n', /^Corefile line 4: forward option `health_check 1s no_rec` is not served/],
    ['.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1\n}\ncorp.example {\n  forward . 10.1.0.1 {\n    max_fails 0\n  }\n}\n', /^Corefile line 5: forward options in the stub block of corp\.example other than the root's \(health;/],
  ];
  for (const [text, message] of cases) t.throws(() => plan(text), { message }, text);
});

t.test("log as the distributions write it (minikube's bare, MicroK8s' and Talos' `class error`, OpenShift's), by block", async (t) => {
  t.equal(plan(KUBEADM_COREFILE).queryLog, null, 'no log: no query log');
  const k = plan('.:53 {\n  log\n  log example.org "{name} {rcode}"\n  kubernetes cluster.local\n}\ncorp.example {\n  log . {\n    class denial error\n  }\n  forward . 10.1.0.1\n}\nquiet.example {\n  forward . 10.1.0.2\n}\n');
  t.same(k.queryLog, [
    { zone: '', rules: [{ zone: '', format: /* common */ k.queryLog![0].rules[0].format, classes: 7 }, { zone: 'example.org', format: '{name} {rcode}', classes: 7 }] },
    { zone: 'corp.example', rules: [{ zone: '', format: k.queryLog![0].rules[0].format, classes: 6 }] },
    { zone: 'quiet.example', rules: [] },
  ]);
  t.match(k.queryLog![0].rules[0].format, /^\{remote\}:\{port\} - \{>id\} "\{type\}/);
  t.match(plan('.:53 {\n  log a.example b.example {combined}\n  kubernetes cluster.local\n}\n').queryLog![0].rules, [{ zone: 'a.example', format: '{combined}' }, { zone: 'b.example', format: '{combined}' }], 'several names share a format');
  const refused: [string, RegExp][] = [
    ['.:53 {\n  log . "{local} {name}"\n  kubernetes cluster.local\n}\n', /^Corefile line 2: the log placeholder \{local\} is not served/],
    ['.:53 {\n  log {\n    class sometimes\n  }\n  kubernetes cluster.local\n}\n', /^Corefile line 3: log: "sometimes" is no class/],
    ['.:53 {\n  log {\n    class\n  }\n  kubernetes cluster.local\n}\n', /^Corefile line 3: log: class needs at least one/],
    ['.:53 {\n  log {\n    format json\n  }\n  kubernetes cluster.local\n}\n', /^Corefile line 3: log: unknown property `format json`/],
  ];
  for (const [text, message] of refused) t.throws(() => plan(text), { message }, text);
});

t.test('rewrite: name rules as CoreDNS reads them, in the order written; what it refuses', async (t) => {
  const rules = plan('.:53 {\n  rewrite name Example.NET example.org\n  rewrite continue name suffix .corp .svc.cluster.local answer auto\n  rewrite stop {\n    name regex (.*)-app\\.example\\.net {1}.app.svc.cluster.local\n    answer name (.*)\\.app\\.svc\\.cluster\\.local {1}-app.example.net\n    value (.*)\\.svc\\.cluster\\.local\\. {1}.example.net\n  }\n  kubernetes cluster.local\n}\n').rewrite;
  t.match(rules, [
    { mode: 'stop', match: 'exact', from: 'example.net.', to: 'example.org.', auto: true, answers: [] },
    { mode: 'continue', match: 'suffix', from: '.corp.', to: '.svc.cluster.local.', auto: true },
    { mode: 'stop', match: 'regex', from: '(.*)-app\\.example\\.net', to: '{1}.app.svc.cluster.local.', auto: false, answers: [{ kind: 'name' }, { kind: 'value' }] },
  ]);
  t.equal(rules[2].answers[1].rewrite('web.app.svc.cluster.local.'), 'web.app.example.net.', 'an answer rule: its groups put in, TO normalized');
  const refused: [string, RegExp][] = [
    ['rewrite answer name a b', /line 2: rewrite: response rewrites must begin with a name rule/],
    ['rewrite name regex (.*)\\.a {1}{2}.b', /line 2: rewrite: the rewrite regex pattern \(\{1\}\{2\}\.b\) uses more subexpressions/],
    ['rewrite name regex (.*\\.a {1}.b', /line 2: rewrite: invalid regex matching pattern/],
    ['rewrite name regex (?=x)a b', /line 2: rewrite: invalid regex matching pattern/],
    ['rewrite name regex (.*)\\.a {1}.b metadata', /line 2: a rewrite rule with metadata is not served/],
    ['rewrite name regex (.*)\\.a {1}.b answer auto answer name (.*) {1}', /line 2: rewrite: auto name answer rule cannot be combined/],
    ['rewrite name fuzzy a b', /line 2: rewrite: a name rule matches exact, prefix, suffix, substring or regex/],
    ['rewrite name exact a b answer', /line 2: rewrite: answer: answer rules begin/],
    ['rewrite edns0 local set 0xffee abc', /line 2: a rewrite rule of the edns0 field is not served/],
  ];
  for (const [line, message] of refused) t.throws(() => plan(`.:53 {\n  ${line}\n  kubernetes cluster.local\n}\n`), { message }, line);
  t.throws(() => plan('cluster.local {\n  kubernetes cluster.local\n}\n. {\n  rewrite name a.example b.example\n  forward . 1.1.1.1\n}\n'), { message: /^Corefile line 4: rewrite in the block of \. apart from kubernetes'/ });
});

t.test("cache ZONES and disable: what is forwarded kept for those zones only, a stub block's disable joining the one cache's", async (t) => {
  const k = plan('.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1\n  cache 30 . {\n    disable success example.org\n  }\n}\ncorp.example {\n  forward . 10.1.0.1\n  cache 30 . {\n    disable denial\n    disable success other.example\n  }\n}\n');
  t.same(k.cache?.zones, ['']);
  t.same(k.cache?.disable, { success: ['example.org'], denial: ['corp.example'] }, "the stub block's bare disable is its zone; one outside it never sees a name");
  const bare = plan('.:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1\n  cache 30\n}\ncorp.example {\n  forward . 10.1.0.1\n}\n');
  t.same(bare.cache?.bypass, ['corp.example'], 'a stub block without a cache: its names pass the one cache untouched, as in CoreDNS');
});

t.test('kubernetes endpoint_pod_names and noendpoints', async (t) => {
  t.match(plan(KUBEADM_COREFILE), { endpointPodNames: false, noEndpoints: false });
  t.match(plan('.:53 {\n  kubernetes cluster.local {\n    endpoint_pod_names\n    noendpoints\n  }\n}\n'), { endpointPodNames: true, noEndpoints: true });
});

t.test('autopath @kubernetes and pods verified', async (t) => {
  const k = plan('.:53 {\n  kubernetes cluster.local {\n    pods verified\n  }\n  autopath @kubernetes\n}\n');
  t.match(k, { autopath: true, pods: 'verified' });
  t.equal(plan(KUBEADM_COREFILE).autopath, false, 'off unless written');
  t.equal(plan('cluster.local {\n  autopath cluster.local @kubernetes\n  kubernetes cluster.local\n}\n').autopath, true, "its block's zone named");
  const refused: [string, RegExp][] = [
    ['.:53 {\n  autopath /etc/resolv.conf\n  kubernetes cluster.local\n}\n', /^Corefile line 2: autopath `\/etc\/resolv\.conf` \(kube-dns serves `autopath @kubernetes`/],
    ['.:53 {\n  autopath example.org @kubernetes\n  kubernetes cluster.local\n}\n', /^Corefile line 2: autopath for zones other than its block's/],
    ['cluster.local {\n  kubernetes cluster.local\n}\n. {\n  autopath @kubernetes\n  forward . 1.1.1.1\n}\n', /^Corefile line 4: autopath in the block of \. apart from kubernetes'/],
  ];
  for (const [text, message] of refused) t.throws(() => plan(text), { message }, text);
});

t.test('visibility { ... }: the ConfigMap\'s policy as a block of the cluster\'s; a reload applies it; a bad line refused at its line', async (t) => {
  const k = plan('.:53 {\n  kubernetes cluster.local\n  visibility {\n    allow frontend apps\n    allow frontend secret\n    allow monitoring *\n    shared platform kube-system/kube-dns\n    unknown_askers deny\n  }\n}\n');
  t.same(k.visibility, { allow: new Map([['frontend', new Set(['apps', 'secret'])], ['monitoring', new Set(['*'])]]), sharedNamespaces: new Set(['platform']), sharedServices: new Set(['kube-system/kube-dns']), unknownAskers: 'deny' });
  t.same(corefileConfig(k).visibility, k.visibility, 'a reload applies it');
  t.same(plan('.:53 {\n  kubernetes cluster.local\n  visibility\n}\n').visibility, { allow: new Map(), sharedNamespaces: new Set(), sharedServices: new Set(['kube-system/kube-dns', 'default/kubernetes']), unknownAskers: 'allow' }, 'bare: each namespace its own, and the shared defaults');
  t.equal(plan(KUBEADM_COREFILE).visibility, null, 'none unless written');
  const refused: [string, RegExp][] = [
    ['.:53 {\n  kubernetes cluster.local\n  visibility strict\n}\n', /^Corefile line 3: visibility: no arguments/],
    ['.:53 {\n  kubernetes cluster.local\n  visibility {\n    deny frontend apps\n  }\n}\n', /^Corefile line 4: visibility: `deny frontend apps`: expected `allow NAMESPACE SEEN\.\.\.`/],
    ['.:53 {\n  kubernetes cluster.local\n  visibility {\n    allow frontend\n  }\n}\n', /^Corefile line 4: visibility: `allow frontend`/],
    ['.:53 {\n  kubernetes cluster.local\n  visibility {\n    allow Frontend apps\n  }\n}\n', /^Corefile line 3: visibility: "allow": "Frontend" is not a namespace name/],
    ['.:53 {\n  kubernetes cluster.local\n  visibility {\n    unknown_askers maybe\n  }\n}\n', /^Corefile line 3: visibility: unknown_askers: "maybe" is neither "allow" nor "deny"/],
    ['cluster.local {\n  kubernetes cluster.local\n}\n. {\n  visibility\n  forward . 1.1.1.1\n}\n', /^Corefile line 4: visibility in the block of \. apart from kubernetes'/],
  ];
  for (const [text, message] of refused) t.throws(() => plan(text), { message }, text);
});

t.test("forward's options: OpenShift's policies (the root's, a stub block's own), health checks, expire, prefer_udp", async (t) => {
  const k = plan('.:5353 {\n  kubernetes cluster.local\n  forward . 10.0.0.1 10.0.0.2 {\n    policy sequential\n    max_fails 3\n    health_check 2s\n    expire 30s\n    prefer_udp\n  }\n}\ncorp.example:5353 {\n  forward . 10.1.0.1 10.1.0.2 {\n    policy round_robin\n    max_fails 3\n    health_check 2s\n    expire 30s\n  }\n}\n');
  t.same(k.forwarding, { forceTcp: false, maxInFlight: undefined, policy: 'sequential', health: { maxFails: 3, checkMs: 2000 }, tcpIdleMs: 30_000 });
  t.same(k.stubPolicies, { 'corp.example': 'round_robin' });
  t.match(plan('corp.example {\n  forward . 10.1.0.1\n}\n.:53 {\n  kubernetes cluster.local\n  forward . 10.0.0.1\n}\n'), { stubPolicies: { 'corp.example': 'random' } }, 'a stub block before the root is checked against the root');
  // The Kubernetes docs' stub domain, appended to kubeadm's Corefile: what it does not write is the root's.
  const docs = plan(`${KUBEADM_COREFILE}consul.local:53 {\n    errors\n    cache 30\n    forward . 10.150.0.1\n}\n`);
  t.same([...docs.stubDomains], [['consul.local', ['10.150.0.1:53']]]);
  t.equal(docs.forwarding.maxInFlight, 1000, "the root's max_concurrent");
});

t.test("forward's except: each zone held by the block that would forward its names, as CoreDNS picks the block", async (t) => {
  const k = plan(`.:53 {
  kubernetes cluster.local
  forward . 10.0.0.1 {
    except Corp.Internal. www.example.org other.net
  }
}
example.org {
  forward . 10.1.0.1 {
    except private.example.org elsewhere.test
  }
}
public.private.example.org {
  forward . 10.2.0.1
}
`);
  t.same(k.forwardExcept, ['corp.internal', 'other.net', 'private.example.org'], "the root's except under example.org is that block's to decide (it forwards them); a stub's except outside its zone never sees a name");
  t.same(corefileConfig(k).forwardExcept, k.forwardExcept, 'a reload applies them as it applies the routes');
});

t.test('template: as CoreDNS reads it; what it refuses', async (t) => {
  const [a, b] = plan('.:53 {\n  template IN A example.net {\n    match "^ip-(?P<a>\\d+)[.]example[.]net[.]$" ^x[.]\n    answer "{{ .Name }} 60 IN A 10.0.0.{{ .Group.a }}"\n    fallthrough\n  }\n  template ANY ANY blocked.test {\n    rcode NXDOMAIN\n  }\n  kubernetes cluster.local\n}\n').template;
  t.match(a, { qclass: 1, qtype: 1, zones: ['example.net'], rcode: 0, fallthrough: [''] });
  t.equal(a.regex.length, 2);
  t.ok(a.regex[0].test('ip-7.example.net.'), "Go's (?P<name>) read");
  t.match(b, { qclass: 255, qtype: 255, zones: ['blocked.test'], rcode: 3, fallthrough: null, answer: [] });
  t.equal(b.regex[0].source, '.*', 'match .* unsaid');
  t.same(plan('example.org {\n  template IN A {\n    answer "{{ .Name }} 5 IN A 192.0.2.1"\n  }\n  kubernetes example.org\n}\n').template[0].zones, ['example.org'], "the block's zone unsaid");
  const refused: [string, RegExp][] = [
    ['template IN A {\n    answer "{{ .Name | printf }} 60 IN A 1.2.3.4"\n  }', /^Corefile line 3: the template action \{\{ \.Name \| printf \}\} is not served/],
    ['template IN A {\n    answer "{{ .Name }} 60 IN NAPTR 1 1 x y z ."\n  }', /^Corefile line 3: a template record of type NAPTR is not served/],
    ['template IN A {\n    var x 1\n  }', /^Corefile line 3: template option `var x 1` is not served/],
    ['template IN A {\n    rcode SOMETIMES\n  }', /^Corefile line 3: rcode: unknown rcode "SOMETIMES"/],
    ['template XX A', /^Corefile line 2: template: invalid query class "XX"/],
    ['template IN A {\n    match (x\n  }', /^Corefile line 3: match: invalid regex "\(x"/],
  ];
  for (const [text, message] of refused) t.throws(() => plan(`.:53 {\n  ${text}\n  kubernetes cluster.local\n}\n`), { message }, text);
});

t.test('kubernetes: reverse zones as CIDRs (as CoreDNS expands them), fallthrough for the cluster zone', async (t) => {
  const k = plan('.:53 {\n  kubernetes cluster.local 10.0.0.0/8 172.16.0.0/12 fd00::/7 {\n    fallthrough in-addr.arpa ip6.arpa\n  }\n}\n');
  t.equal(k.domain, 'cluster.local');
  t.equal(k.clusterFallthrough, false);
  t.ok(plan('.:53 {\n  kubernetes cluster.local {\n    fallthrough\n  }\n}\n').clusterFallthrough, 'bare fallthrough: the cluster zone too');
  t.ok(plan('.:53 {\n  kubernetes cluster.local in-addr.arpa {\n    fallthrough cluster.local in-addr.arpa\n  }\n}\n').clusterFallthrough, 'the cluster zone named');
  t.same(plan('.:53 {\n  kubernetes cluster.local {\n    namespaces App kube-system\n  }\n}\n').namespaces, ['app', 'kube-system'], 'namespaces');
});

t.test("cache's MINTTL: CoreDNS's 5 s unsaid, written as success/denial's third argument", async (t) => {
  t.match(plan(KUBEADM_COREFILE).cache, { successMinTtl: 5, denialMinTtl: 5 });
  t.match(plan('.:53 {\n  kubernetes cluster.local\n  cache 300 {\n    success 1000 300 60\n    denial 1000 60 0\n  }\n}\n').cache, { successTtl: 300, successMinTtl: 60, denialTtl: 60, denialMinTtl: 0 });
});

t.test('file: a zone of its own block, or in the cluster\'s; a file that does not read refused at the line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'db'), '@ IN SOA ns hm 1 60 60 60 30\n  IN NS ns\nns IN A 192.0.2.1\n');
  writeFileSync(join(dir, 'bad'), '@ IN SOA ns hm 1 60 60 60 30\nwww IN A 300.1.1.1\n');
  const k = plan(`.:53 {\n  kubernetes cluster.local\n  cache 30\n}\nexample.net {\n  file ${join(dir, 'db')} {\n    reload 10s\n    fallthrough\n  }\n}\n`);
  t.match(k.file, [{ file: join(dir, 'db'), zones: ['example.net'], reloadMs: 10_000, fallthrough: [''], cache: null }], "the block's zone, its own (no) cache");
  t.match(plan(`.:53 {\n  kubernetes cluster.local\n  file ${join(dir, 'db')} example.org\n}\n`).file, [{ zones: ['example.org'], reloadMs: 60_000 }], "in the cluster's block, for the zones written");
  t.throws(() => plan(`.:53 {\n  kubernetes cluster.local\n}\nexample.net {\n  file ${join(dir, 'bad')}\n}\n`), { message: /^Corefile line 5: file: .*bad: line 2: A: "300\.1\.1\.1" is not an IPv4 address/ });
  t.throws(() => plan(`.:53 {\n  kubernetes cluster.local\n}\nexample.net {\n  file ${join(dir, 'db')} {\n    reload_by_mtime\n  }\n}\n`), { message: /^Corefile line 6: file option `reload_by_mtime` is not served/ });
});
