// kube-dns given CoreDNS's command line and kubeadm's Corefile (issue 25), on a real API server: the
// coredns Deployment's `-conf` with kubeadm's Corefile, its addresses moved to free loopback ports,
// its `forward` to a local dnsmasq instead of the node's resolv.conf, a `kubeconfig` line (the
// Deployment's in-cluster account has no file here) and `reload 2s`. What a client and a kubelet see:
// the cluster's names (ttl 30, pods insecure), addresses outside the cluster handed on (fallthrough),
// names outside it forwarded and kept 30 s (`cache 30`), /health, /ready (503 in the lame duck while
// DNS still answers), /metrics under CoreDNS's names (what the coredns mixin's alerts read); the
// Corefile edited: a new upstream applied, a broken line refused with the running one serving on.

import t from 'tap';
import type { Test } from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { k3sCorefile, kubeadmCorefile } from './harness/manifests.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/ports.ts';
import { repoRoot, startCommand } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';
import { metricNames } from '../monitoring/promtool.ts';
import { ownAddresses } from '../../pkg/kubedns/leave-service.ts';

const WAIT = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ports {
  dns: number;
  health: number;
  ready: number;
  metrics: number;
}

/** kubeadm's Corefile on loopback ports, forwarding to `upstream`, reading the API with `kubeconfig`, reloaded every 2 s (CoreDNS's least). */
function corefile(p: Ports, upstream: number, kubeconfig: string, extra = ''): string {
  const text = kubeadmCorefile()
    .replace('.:53 {', `.:${p.dns} {\n    bind 127.0.0.1${extra}`)
    .replace('health {', `health 127.0.0.1:${p.health} {`)
    .replace('lameduck 5s', 'lameduck 2s')
    .replace(/^(\s*)ready$/m, `$1ready 127.0.0.1:${p.ready}`)
    .replace('prometheus :9153', `prometheus 127.0.0.1:${p.metrics}`)
    .replace('forward . /etc/resolv.conf {', `forward . 127.0.0.1:${upstream} {`)
    .replace('ttl 30', `ttl 30\n       kubeconfig ${kubeconfig}`)
    .replace(/^(\s*)reload$/m, '$1reload 2s');
  if (text === kubeadmCorefile()) throw new Error('kubeadm Corefile not rewritten');
  return text;
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: r.status, body: await r.text() };
}

function startCoreMode(t: Test, conf: string): Program {
  return startCommand(t, [process.execPath, `${repoRoot}cmd/kube-dns/main.ts`, '-conf', conf], {}, 'kube-dns');
}

t.test("kube-dns -conf with kubeadm's Corefile on a real API server", async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const upA = await startDnsmasq(t, ['192.0.2.7 www.example.org', '192.0.2.8 first.example.org'], ['--local-ttl=300']);
  const upB = await startDnsmasq(t, ['192.0.2.9 second.example.org']);
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'app' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
  ]);
  const web = (await cluster.request('GET', '/api/v1/namespaces/app/services/web')).body.spec.clusterIP as string;
  const p: Ports = { dns: await freePort(), health: await freePort(), ready: await freePort(), metrics: await freePort() };
  const conf = join(dir, 'Corefile');
  writeFileSync(conf, corefile(p, upA.port, cluster.kubeconfig(cluster.kubeDnsToken)));
  const kd = startCoreMode(t, conf);
  await kd.waitFor(/initial sync done/, WAIT);

  await t.test('the cluster: A with ttl 30, SRV, PTR of the ClusterIP, a pod record (pods insecure)', async (t) => {
    const a = await dig(p.dns, 'web.app.svc.cluster.local');
    t.same(answers(a), [web]);
    t.equal(a.answer[0].ttl, 30, 'kubernetes { ttl 30 }');
    // Priority 10 as kube-dns has always answered (CoreDNS: 0); clients order by it only against other records.
    t.same(answers(await dig(p.dns, '_http._tcp.web.app.svc.cluster.local', 'SRV'), 'SRV'), ['10 100 80 web.app.svc.cluster.local.']);
    t.same(answers(await dig(p.dns, '', 'PTR', ['-x', web]), 'PTR'), ['web.app.svc.cluster.local.']);
    t.same(answers(await dig(p.dns, '10-1-2-3.app.pod.cluster.local')), ['10.1.2.3']);
    t.equal((await dig(p.dns, 'nothing.app.svc.cluster.local')).status, 'NXDOMAIN');
  });

  await t.test('outside the cluster: forwarded, kept 30 s (cache 30); an address outside it falls through to the upstream', async (t) => {
    const r = await dig(p.dns, 'www.example.org');
    t.same(answers(r), ['192.0.2.7']);
    t.ok(r.answer[0].ttl <= 30, `TTL ${r.answer[0].ttl}: capped by cache 30 (the upstream says 300)`);
    t.same(answers(await dig(p.dns, '', 'PTR', ['-x', '192.0.2.7']), 'PTR'), ['www.example.org.'], 'fallthrough in-addr.arpa: the upstream answers');
  });

  await t.test('/health, /ready, /metrics where the Corefile puts them', async (t) => {
    t.same(await get(p.health, '/health'), { status: 200, body: 'OK' });
    t.same(await get(p.ready, '/ready'), { status: 200, body: 'OK' });
    const m = await get(p.metrics, '/metrics');
    t.equal(m.status, 200);
    t.match(m.body, /kubedns_dns_responses_total/);
  });

  await t.test('an edited Corefile: a new upstream and a rewrite applied within reload; a broken line refused, the running one serving on', async (t) => {
    writeFileSync(conf, corefile(p, upB.port, cluster.kubeconfig(cluster.kubeDnsToken)));
    await eventually(async () => answers(await dig(p.dns, 'second.example.org')).join() === '192.0.2.9', 'second.example.org through the new upstream', WAIT);
    t.same(answers(await dig(p.dns, 'alias.example.org')), [], 'no alias yet');
    writeFileSync(conf, corefile(p, upB.port, cluster.kubeconfig(cluster.kubeDnsToken), '\n    rewrite name alias.example.org second.example.org'));
    await eventually(async () => answers(await dig(p.dns, 'alias.example.org')).join() === '192.0.2.9', "the rewrite added to the Corefile answers (the alias's cached NXDOMAIN dropped)", WAIT);
    await kd.waitFor(/Corefile plugins replaced.*rewrite/, WAIT);
    writeFileSync(conf, corefile(p, upA.port, cluster.kubeconfig(cluster.kubeDnsToken), '\n    rewrite type ANY HINFO'));
    await kd.waitFor(/Corefile not reloaded: the running one serves on .*line 3: a rewrite rule of the type field is not served/, WAIT);
    t.same(answers(await dig(p.dns, 'web.app.svc.cluster.local')), [web], 'the cluster still answered');
    t.same(answers(await dig(p.dns, 'first.example.org')), [], 'still the second upstream (which has no first.example.org): the broken edit was not applied');
    t.same(answers(await dig(p.dns, 'alias.example.org')), ['192.0.2.9'], 'and still the running rewrite');
  });

  await t.test("CoreDNS's metrics on prometheus's address: every series the coredns mixin's alerts read, with the labels they select on", async (t) => {
    // A forwarded name asked 8 times: with up to 7 answering threads (each its own cache, the kernel
    // spreading askers' ports over them), at least two land on one thread and one is a cache hit.
    for (let i = 0; i < 8; i++) t.same(answers(await dig(p.dns, 'second.example.org')), ['192.0.2.9']);
    const text = (await get(p.metrics, '/metrics')).body;
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    const rules = parse(readFileSync(`${repoRoot}test/monitoring/coredns-mixin-alerts.yaml`, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      for (const name of metricNames(rule.expr)) {
        // up is Prometheus's.
        if (name === 'up') continue;
        t.ok(exported.has(name.replace(/_(bucket|sum|count)$/, '')), `${rule.alert}: ${name} is exported`);
      }
    }
    const server = `server="dns://127.0.0.1:${p.dns}",zone=".",view=""`;
    t.match(text, new RegExp(`^coredns_dns_responses_total\\{${server},rcode="NOERROR",plugin=""\\} [1-9]`, 'm'), 'responses by rcode, per server and zone');
    t.match(text, new RegExp(`^coredns_dns_requests_total\\{${server},proto="udp",family="1",type="A"\\} [1-9]`, 'm'), 'requests by protocol, family and type');
    t.match(text, new RegExp(`^coredns_dns_request_duration_seconds_bucket\\{${server},le="\\+Inf"\\} [1-9]`, 'm'), 'the duration histogram');
    // What the coredns mixin's dashboard reads beside the alerts' series.
    t.match(text, new RegExp(`^coredns_dns_request_size_bytes_bucket\\{${server},proto="udp",le="100"\\} [1-9]`, 'm'), 'request sizes by protocol (a question under 100 bytes)');
    t.match(text, new RegExp(`^coredns_dns_response_size_bytes_bucket\\{${server},proto="udp",le="\\+Inf"\\} [1-9]`, 'm'), 'reply sizes by protocol');
    t.match(text, new RegExp(`^coredns_cache_entries\\{server="dns://127\\.0\\.0\\.1:${p.dns}",type="success",zones="\\.",view=""\\} [1-9]`, 'm'), 'the cache size');
    t.match(text, new RegExp(`^coredns_forward_responses_total\\{to="127\\.0\\.0\\.1:${upA.port}",rcode="NOERROR"\\} [1-9]`, 'm'), 'forward replies per upstream and rcode');
    t.match(text, new RegExp(`^coredns_forward_request_duration_seconds_bucket\\{to="127\\.0\\.0\\.1:${upB.port}",rcode="NOERROR",le="\\+Inf"\\} [1-9]`, 'm'), 'forward durations per upstream and rcode');
    t.match(text, /^coredns_reload_failed_total 1$/m, 'the broken reload counted');
    t.match(text, new RegExp(`^coredns_cache_hits_total\\{server="dns://127\\.0\\.0\\.1:${p.dns}",type="success",zones="\\.",view=""\\} [1-9]`, 'm'), 'forwarded answers from the cache: hits');
    t.match(text, new RegExp(`^coredns_cache_requests_total\\{server="dns://127\\.0\\.0\\.1:${p.dns}",zones="\\.",view=""\\} [1-9]`, 'm'), 'and requests');
    t.match(text, new RegExp(`^coredns_plugin_enabled\\{${server},name="kubernetes"\\} 1$`, 'm'), 'the plugins in force');
    t.match(text, new RegExp(`^coredns_plugin_enabled\\{${server},name="rewrite"\\} 1$`, 'm'), 'the one a reload added too');
    t.match(text, /^coredns_build_info\{version="0\.\d+\.\d+",revision="",goversion="v24\./m, 'the build');
    t.match(text, /^coredns_kubernetes_rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:\d+"\} [1-9]/m, "the API requests, as client-go counts them");
    t.match(text, /^coredns_kubernetes_rest_client_request_duration_seconds_count\{verb="GET",host="127\.0\.0\.1:\d+"\} [1-9]/m, 'and their latency');
  });

  await t.test('hosts and template added by a reload: answered, and counted under CoreDNS names (coredns_hosts_entries, coredns_template_matches_total)', async (t) => {
    const extra = '\n    rewrite name alias.example.org second.example.org\n    template IN A tmpl.example.org {\n      answer "{{ .Name }} 60 IN A 10.7.7.7"\n    }\n    hosts {\n      10.1.1.1 inline.lan\n      fallthrough\n    }';
    writeFileSync(conf, corefile(p, upB.port, cluster.kubeconfig(cluster.kubeDnsToken), extra));
    await eventually(async () => answers(await dig(p.dns, 'x.tmpl.example.org')).join() === '10.7.7.7', 'the template answers after reload', WAIT);
    t.same(answers(await dig(p.dns, 'inline.lan')), ['10.1.1.1'], 'hosts answers');
    const text = (await get(p.metrics, '/metrics')).body;
    t.match(text, new RegExp(`^coredns_template_matches_total\\{server="dns://127\\.0\\.0\\.1:${p.dns}",zone="tmpl\\.example\\.org\\.",view="",class="IN",type="A"\\} [1-9]`, 'm'), 'template matches by server, zone, class and type');
    t.match(text, /^coredns_hosts_entries\{hostsfile="\/etc\/hosts"\} [1-9]/m, "the hosts entries: /etc/hosts (no file written: CoreDNS's default) and the inline one");
  });

  await t.test("coredns_kubernetes_dns_programming_duration_seconds: from an EndpointSlice's last-change-trigger-time to serving it, by the Service's kind", async (t) => {
    const changed = new Date(Date.now() - 1500).toISOString();
    await cluster.apply([
      {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
        metadata: { name: 'web-1', namespace: 'app', labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'e2e' }, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': changed } },
        endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      },
    ]);
    const series = /^coredns_kubernetes_dns_programming_duration_seconds_(count|sum)\{service_kind="cluster_ip"\} (\S+)$/gm;
    let seen = new Map<string, number>();
    await eventually(async () => {
      seen = new Map([...(await get(p.metrics, '/metrics')).body.matchAll(series)].map((m) => [m[1], Number(m[2])]));
      return seen.get('count') === 1;
    }, 'the slice of a ClusterIP Service observed once', WAIT);
    t.ok(seen.get('sum')! >= 1.5, `from its trigger time, 1.5 s before it was written (${seen.get('sum')} s)`);
  });

  await t.test('SIGTERM: /ready 503 and DNS answering through the lame duck (health { lameduck }), then exit 0', async (t) => {
    kd.child.kill('SIGTERM');
    await eventually(async () => (await get(p.ready, '/ready')).status === 503, '/ready 503 after SIGTERM', 1500);
    t.same(answers(await dig(p.dns, 'web.app.svc.cluster.local')), [web], 'answered in the lame duck');
    t.equal((await get(p.health, '/health')).status, 200, '/health stays OK (a liveness probe)');
    t.equal(await kd.exited, 0);
  });
});

t.test('kube-dns -conf: a line it does not serve is an error at start (exit 1, naming the line); -plugins, -version', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const conf = join(dir, 'Corefile');
  writeFileSync(conf, '.:53 {\n    kubernetes cluster.local\n    rewrite stop {\n        ttl regex (.*)\\.example\\.org 30\n    }\n}\n');
  const bad = startCoreMode(t, conf);
  t.equal(await bad.exited, 1);
  t.match(bad.output(), /Corefile line 3: a rewrite rule of the ttl field is not served/);
  const plugins = startCommand(t, [process.execPath, `${repoRoot}cmd/kube-dns/main.ts`, '-plugins'], {}, 'kube-dns');
  t.equal(await plugins.exited, 0);
  t.match(plugins.output(), /dns\.kubernetes\n {2}dns\.file\n {2}dns\.loop\n {2}dns\.forward/);
  const version = startCommand(t, [process.execPath, `${repoRoot}cmd/kube-dns/main.ts`, '-version', '-quiet'], {}, 'kube-dns');
  t.equal(await version.exited, 0);
  t.match(version.output(), /^kube-dns-ts-\d+\.\d+\.\d+\n/);
});

t.test("kube-dns -conf with k3s's Corefile shape: hosts from a NodeHosts file (re-read), import of *.override inside the block and *.server at the top", async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const up = await startDnsmasq(t, ['192.0.2.7 www.example.org']);
  const corp = await startDnsmasq(t, ['10.9.0.1 db.corp.example']);
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'app' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
  ]);
  const dns = await freePort();
  const ready = await freePort();
  mkdirSync(join(dir, 'custom'));
  writeFileSync(join(dir, 'NodeHosts'), '10.200.0.1 node-a\n10.200.0.2 node-b node-b.lan\n');
  // k3s's Corefile, its paths relative here, on loopback ports.
  writeFileSync(join(dir, 'Corefile'), k3sCorefile({ port: dns, ready, kubeconfig: cluster.kubeconfig(cluster.kubeDnsToken), nodeHosts: join(dir, 'NodeHosts'), hostsReload: '1s', upstream: up.port, custom: 'custom' }));
  writeFileSync(join(dir, 'custom', 'any.override'), 'any\n');
  writeFileSync(join(dir, 'custom', 'corp.server'), `corp.example:${dns} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${corp.port}\n}\n`);
  const kd = startCommand(t, [process.execPath, `${repoRoot}cmd/kube-dns/main.ts`, '-conf', join(dir, 'Corefile')], {}, 'kube-dns');
  await eventually(async () => (await get(ready, '/ready').catch(() => ({ status: 0 }))).status === 200, 'ready', WAIT).catch((err) => t.fail(`${err}\n${kd.output()}`));
  const a = await dig(dns, 'node-b');
  t.same(answers(a), ['10.200.0.2'], 'a NodeHosts name');
  t.equal(a.answer[0].ttl, 30, 'hosts { ttl 60 } under cache 30: 30, as CoreDNS\'s cache caps what hosts answers');
  t.ok(a.flags.includes('aa'), 'authoritative');
  t.same(answers(await dig(dns, 'node-b', 'AAAA')), [], 'NODATA for a family it has no address of');
  t.same(answers(await dig(dns, '', 'PTR', ['-x', '10.200.0.1']), 'PTR'), ['node-a.'], 'PTR from the hosts file');
  t.same(answers(await dig(dns, 'www.example.org')), ['192.0.2.7'], 'a name it does not hold falls through to forward');
  t.ok(answers(await dig(dns, 'web.app.svc.cluster.local')).length === 1, 'the cluster answers');
  t.same(answers(await dig(dns, 'db.corp.example')), ['10.9.0.1'], 'the imported *.server block: a stub domain');
  writeFileSync(join(dir, 'NodeHosts'), '10.200.0.1 node-a\n10.200.0.2 node-b node-b.lan\n10.200.0.3 node-c\n');
  await eventually(async () => answers(await dig(dns, 'node-c')).join() === '10.200.0.3', 'a node added to NodeHosts answered after hosts reload', WAIT);
  t.pass('NodeHosts re-read');
});

/**
 * kube-dns -conf with a Corefile of its own in `dir`: the cluster, a forward to 127.0.0.1:`upstream`, and
 * `cache 30` with MINTTL 0 and the option `cacheOption`; resolves once /ready says 200.
 */
async function startForwardCache(t: Test, cluster: Awaited<ReturnType<typeof startCluster>>, dir: string, upstream: number, cacheOption: string): Promise<{ dns: number; metrics: number }> {
  const [dns, ready, metrics] = [await freePort(), await freePort(), await freePort()];
  const conf = join(dir, `Corefile-${cacheOption.replace(/\W+/g, '-')}`);
  writeFileSync(conf, `.:${dns} {
    bind 127.0.0.1
    ready 127.0.0.1:${ready}
    prometheus 127.0.0.1:${metrics}
    kubernetes cluster.local {
      kubeconfig ${cluster.kubeconfig(cluster.kubeDnsToken)}
    }
    forward . 127.0.0.1:${upstream}
    cache 30 {
      success 9984 30 0
      ${cacheOption}
    }
}
`);
  const kd = startCoreMode(t, conf);
  await eventually(async () => (await get(ready, '/ready').catch(() => ({ status: 0 }))).status === 200, 'ready', WAIT).catch((err) => t.fail(`${err}\n${kd.output()}`));
  return { dns, metrics };
}

t.test('cache { serve_stale }: a forwarded answer kept past its TTL is answered while the upstream is silent: at once and refreshed behind (immediate, unsaid), or once the upstream failed (verify)', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const up = await startDnsmasq(t, ['192.0.2.7 www.example.org'], ['--local-ttl=1']);
  t.teardown(() => void process.kill(up.pid, 'SIGCONT'));
  const serve = async (mode: string) => {
    const { dns, metrics } = await startForwardCache(t, cluster, dir, up.port, `serve_stale 1h ${mode}`);
    const fresh = await dig(dns, 'www.example.org');
    t.same(answers(fresh), ['192.0.2.7']);
    t.equal(fresh.answer[0].ttl, 1, "the upstream's TTL");
    return { dns, metrics };
  };
  const timed = async (dns: number, name: string) => {
    const start = Date.now();
    const r = await dig(dns, name);
    return { r, ms: Date.now() - start };
  };
  const [immediate, verify] = [(await serve('')).dns, await serve('verify')];
  process.kill(up.pid, 'SIGSTOP');
  await new Promise((r) => setTimeout(r, 1500));
  for (const [mode, dns] of [['immediate', immediate], ['verify', verify.dns]] as const) {
    const { r: stale, ms } = await timed(dns, 'www.example.org');
    t.same(answers(stale), ['192.0.2.7'], `${mode}: expired, the upstream silent: the stale answer`);
    t.equal(stale.answer[0].ttl, 30, `${mode}: with RFC 8767's TTL of 30 s`);
    if (mode === 'immediate') t.ok(ms < 1000, `immediate: answered at once (${ms} ms)`);
    else t.ok(ms >= 1500, `verify: answered once the upstream failed (${ms} ms)`);
    t.equal((await dig(dns, 'other.example.org')).status, 'SERVFAIL', `${mode}: a name never answered has no stale answer`);
  }
  t.match((await get(verify.metrics, '/metrics')).body, /^coredns_cache_served_stale_total\{server="dns:\/\/127\.0\.0\.1:\d+",zones="\.",view=""\} 1$/m, 'coredns_cache_served_stale_total counts it');
  process.kill(up.pid, 'SIGCONT');
  t.equal((await dig(immediate, 'www.example.org')).answer[0].ttl, 30, 'immediate, the upstream back: stale once more, refreshed behind it');
  await eventually(async () => (await dig(immediate, 'www.example.org')).answer[0].ttl <= 1, 'the refreshed answer (TTL 1) served from then on', 5000);
  t.pass('refreshed');
});

t.test('cache { prefetch }: a forwarded name asked often enough is asked again before its TTL runs out and answers on past it with the upstream silent; counted in coredns_cache_prefetch_total', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const up = await startDnsmasq(t, ['192.0.2.7 popular.example.org', '192.0.2.8 rare.example.org'], ['--local-ttl=4']);
  t.teardown(() => void process.kill(up.pid, 'SIGCONT'));
  const { dns, metrics } = await startForwardCache(t, cluster, dir, up.port, 'prefetch 2 1m 50%');
  // One source port: every ask reaches the same thread (SO_REUSEPORT picks by the asker's address), whose cache counts them.
  const from = ['-b', `127.0.0.1#${await freePort()}`];
  const ask = (name: string, extra: string[] = []) => dig(dns, name, 'A', [...from, ...extra]);
  for (const name of ['popular.example.org', 'rare.example.org']) t.equal((await ask(name)).answer[0]?.ttl, 4, `${name}: the upstream's TTL`);
  await sleep(2200);
  await ask('popular.example.org');
  await ask('popular.example.org');
  await ask('rare.example.org');
  await sleep(300);
  const scraped = (await get(metrics, '/metrics')).body;
  t.match(scraped, /^coredns_cache_prefetch_total\{server="dns:\/\/127\.0\.0\.1:\d+",zones="\.",view=""\} 1$/m, 'one prefetch: the name asked twice in the second half of its TTL');
  t.match(scraped, /^coredns_cache_entries\{server="dns:\/\/127\.0\.0\.1:\d+",type="success",zones="\.",view=""\} 2$/m, 'coredns_cache_entries: the two forwarded names');
  t.match(scraped, /^coredns_cache_evictions_total\{server="dns:\/\/127\.0\.0\.1:\d+",type="denial",zones="\.",view=""\} 0$/m, 'coredns_cache_evictions_total, by type');
  process.kill(up.pid, 'SIGSTOP');
  await sleep(2500);
  t.same(answers(await ask('popular.example.org')), ['192.0.2.7'], 'past its first TTL, the upstream silent: the prefetched answer');
  t.equal((await ask('rare.example.org', ['+tries=1', '+timeout=4'])).status, 'SERVFAIL', 'the name asked once expired: asked of the silent upstream');
});

t.test("SIGTERM under kubeadm's probes: answering on past lameduck until the pod's endpoint is no longer serving, never past its deletion deadline", async (t) => {
  if (!e2eCanRun(t)) return;
  // The pod's address as its endpoint: one of this machine's (kube-dns reads its own interfaces).
  const own = [...ownAddresses()].find((a) => !a.includes(':'));
  if (own === undefined) return void t.skip('no IPv4 address but loopback', () => {});
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const slice = (pod: string, ready: boolean, serving = ready) => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'dns-1', namespace: 'lame', labels: { 'kubernetes.io/service-name': 'dns', 'endpointslice.kubernetes.io/managed-by': 'e2e' } }, addressType: 'IPv4',
    endpoints: [{ addresses: [own], conditions: { ready, serving, terminating: !ready }, targetRef: { kind: 'Pod', namespace: 'lame', name: pod } }], ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
  });
  // Bound to a node (no kubelet here): a deletion leaves the pod with its deletionTimestamp, as a kubelet would see it.
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'lame' }, spec: { nodeName: 'node-a', containers: [{ name: 'coredns', image: 'example.invalid/coredns' }] } });
  await cluster.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lame' } }, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'dns', namespace: 'lame' }, spec: { clusterIP: 'None', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } }, pod('dns-a'), pod('dns-b')]);

  /** kube-dns -conf (lameduck 1s) serving the Service whose endpoint is this machine, `pod` deleted with `grace` seconds, then SIGTERM: the ms from SIGTERM to exit, and its log. */
  const terminate = async (t: Test, podName: string, grace: number, whileLame: (kd: Program, dns: number) => Promise<void>) => {
    const dns = await freePort();
    const conf = join(dir, `Corefile-${podName}`);
    writeFileSync(conf, `.:${dns} {\n    bind 127.0.0.1\n    health 127.0.0.1:${await freePort()} {\n        lameduck 1s\n    }\n    kubernetes cluster.local {\n        kubeconfig ${cluster.kubeconfig(cluster.kubeDnsToken)}\n    }\n}\n`);
    await cluster.apply([slice(podName, true)]);
    const kd = startCoreMode(t, conf);
    await eventually(async () => answers((await dig(dns, 'dns.lame.svc.cluster.local').catch(() => null)) ?? { answer: [] } as never).join() === own, 'the endpoint watched', WAIT);
    const deleted = await cluster.request('DELETE', `/api/v1/namespaces/lame/pods/${podName}`, { gracePeriodSeconds: grace });
    t.equal(deleted.status, 200, 'the pod is terminating');
    // As the EndpointSlice controller marks a terminating pod: not ready, still serving (its probe passed).
    await cluster.apply([slice(podName, false, true)]);
    const sigterm = Date.now();
    kd.child.kill('SIGTERM');
    await whileLame(kd, dns);
    t.equal(await kd.exited, 0);
    return { ms: Date.now() - sigterm, exitedAt: Date.now(), log: kd.output() };
  };

  await t.test('serving until the readiness probe takes the endpoint out: exits after kube-proxy has had its sync', async (t) => {
    let outAt = 0;
    const { exitedAt, log } = await terminate(t, 'dns-a', 60, async (kd, dns) => {
      await new Promise((r) => setTimeout(r, 2500));
      t.equal((await dig(dns, 'kubernetes.default.svc.cluster.local')).status, 'NOERROR', 'still answering 1.5 s past lameduck: the endpoint still serving');
      t.equal(kd.child.exitCode, null, 'not exited');
      await cluster.apply([slice('dns-a', false, false)]);
      outAt = Date.now();
    });
    const afterOut = exitedAt - outAt;
    t.ok(afterOut >= 1000 && afterOut < 6000, `exited ${afterOut} ms after the endpoint stopped serving (kube-proxy's sync: 1.5 s)`);
    t.match(log, /shutting down .*after="lame duck \(out of every Service\)"/);
  });

  await t.test("never past the pod's deletion deadline (deletionTimestamp less 0.75 s for the drain)", async (t) => {
    const { ms, log } = await terminate(t, 'dns-b', 6, async (kd, dns) => {
      await new Promise((r) => setTimeout(r, 2000));
      t.equal((await dig(dns, 'kubernetes.default.svc.cluster.local')).status, 'NOERROR', 'answering past lameduck');
    });
    // deletionTimestamp is in whole seconds: 4.25-5.25 s after the DELETE.
    t.ok(ms >= 3000 && ms < 6000, `exited ${ms} ms after SIGTERM, the pod deleted with 6 s of grace`);
    t.match(log, /shutting down .*after="lame duck \(deletion deadline\)"/);
  });
});

t.test("kube-dns -conf with a `visibility` block: the ConfigMap's policy in the Corefile, its askers' namespaces from the Pod watch, an edit in force at the reload", async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const up = await startDnsmasq(t, []);
  const pods: [string, string][] = [['frontend', '10.244.3.4'], ['secret', '10.244.3.5']];
  for (const ns of ['frontend', 'apps', 'secret']) await cluster.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }]);
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'apps' }, spec: { ports: [{ port: 80 }] } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'secret' }, spec: { ports: [{ port: 5432 }] } },
    ...pods.map(([ns]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client', namespace: ns }, spec: { containers: [{ name: 'c', image: 'example.invalid/c' }] } })),
  ]);
  for (const [ns, ip] of pods) {
    t.equal((await cluster.request('PATCH', `/api/v1/namespaces/${ns}/pods/client/status`, { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } })).status, 200, `${ns}'s pod has ${ip}`);
  }
  const p: Ports = { dns: await freePort(), health: await freePort(), ready: await freePort(), metrics: await freePort() };
  const conf = join(dir, 'Corefile');
  const policy = (seen: string) => `\n    visibility {\n        allow frontend ${seen}\n        unknown_askers deny\n    }`;
  writeFileSync(conf, corefile(p, up.port, cluster.kubeconfig(cluster.kubeDnsToken), policy('apps')));
  const kd = startCoreMode(t, conf);
  await kd.waitFor(/initial sync done/, WAIT);
  // As a pod's own dnscache asks on loopback: the pod's address in the Client Subnet.
  const ask = (asker: string, name: string) => dig(p.dns, name, 'A', [`+subnet=${asker}/32`]).then((r) => r.status);
  await eventually(async () => (await ask('10.244.3.4', 'web.apps.svc.cluster.local')) === 'NOERROR', "frontend's pod sees apps' Service, once the Pod watch has shown it", WAIT);
  t.equal(await ask('10.244.3.4', 'db.secret.svc.cluster.local'), 'NXDOMAIN', "not secret's");
  t.equal(await ask('10.244.3.4', 'kubernetes.default.svc.cluster.local'), 'NOERROR', 'the API server: shared, unsaid');
  t.equal(await ask('10.244.3.5', 'db.secret.svc.cluster.local'), 'NOERROR', "secret's pod sees its own");
  t.equal(await ask('10.244.3.5', 'web.apps.svc.cluster.local'), 'NXDOMAIN', "and not apps'");
  t.equal(await ask('10.244.3.9', 'web.apps.svc.cluster.local'), 'NXDOMAIN', 'an asker of no known namespace: unknown_askers deny');
  writeFileSync(conf, corefile(p, up.port, cluster.kubeconfig(cluster.kubeDnsToken), policy('apps secret')));
  await eventually(async () => (await ask('10.244.3.4', 'db.secret.svc.cluster.local')) === 'NOERROR', "the edit (allow frontend apps secret) in force at the next reload", WAIT);
  writeFileSync(conf, corefile(p, up.port, cluster.kubeconfig(cluster.kubeDnsToken), '\n    visibility {\n        allow Frontend apps\n    }'));
  await kd.waitFor(/Frontend.*is not a namespace name/, WAIT);
  t.equal(await ask('10.244.3.4', 'db.secret.svc.cluster.local'), 'NOERROR', 'a bad policy refused at its line, the running one kept');
});
