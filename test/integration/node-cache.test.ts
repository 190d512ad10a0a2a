// node-cache as the DaemonSet runs it, in a network namespace of the test's own (its loopback, its
// netfilter tables): the upstream template's Corefile, -localip 169.254.20.10 and the kube-dns
// ClusterIP, kube-dns (the real program) as the upstream Service on 127.0.0.1:53 reached over TCP,
// a real dnsmasq as the node's resolver. The interface (a bridge here: this kernel has no dummy
// driver) and the NOTRACK/ACCEPT rules, iptables and nftables; answers through both addresses;
// the kube-dns ConfigMap's stubDomains merged; teardown; a Corefile line it cannot serve.

import t from 'tap';
import type { Test } from 'tap';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDig } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { DNSMASQ, dnsmasqHostsArgs, dnsmasqReadableDir } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { service, yamlDocs } from '../helpers/kubedns.ts';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import { parseSamples } from '../helpers/sidecar.ts';
import { promtoolBin, promtoolCanRun } from '../monitoring/promtool.ts';
import { startCommand, startProgram } from '../helpers/process.ts';
import { nodeLocalCorefile, README_VALUES } from '../e2e/harness/manifests.ts';
import type { Program } from '../helpers/process.ts';

const run = promisify(execFile);
const LOCAL = README_VALUES.localDns;
const CLUSTER_IP = README_VALUES.server;

/** Kubernetes' nodelocaldns.yaml Corefile (our manifest's) with the operator's pillars replaced (iptables mode: both addresses). */
const TEMPLATE = nodeLocalCorefile();

interface Node {
  netns: string;
  dir: string;
  exec: (argv: string[]) => Promise<string>;
  dig: (server: string, name: string, extra?: string[]) => Promise<DigResult>;
}

/** The namespace, kube-dns on 127.0.0.1:53 (a Service web), and dnsmasq on 127.0.0.2:53 (the world: www.example.org). */
async function node(t: Test): Promise<Node> {
  const { dns: netns } = podNetwork(t, []);
  const wrap = ['ip', 'netns', 'exec', netns];
  const dir = dnsmasqReadableDir('kdt-node-cache-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'cluster.yaml'), yamlDocs(service('default', 'web', 'clusterIP: 10.96.0.5\nports:\n- {name: http, port: 80}')));
  writeFileSync(join(dir, 'hosts'), '192.0.2.40 www.example.org\n192.0.2.41 db.acme.local\n');
  writeFileSync(join(dir, 'empty-resolv.conf'), '');
  const kubeDns = startProgram(t, 'kube-dns', [`--cluster-file=${join(dir, 'cluster.yaml')}`, '--dns-bind-address=127.0.0.1', '--dns-port=53', '--http-bind-address=127.0.0.1', '--healthz-port=0', `--resolv-conf=${join(dir, 'empty-resolv.conf')}`], {}, wrap);
  await kubeDns.waitFor(/initial sync done/);
  const world = startCommand(t, [...wrap, DNSMASQ, ...dnsmasqHostsArgs(53, join(dir, 'hosts'), join(dir, 'dnsmasq.pid'), [], '127.0.0.2')], {}, 'dnsmasq');
  await world.waitFor(/read .*hosts - 2 names/);
  const exec = async (argv: string[]) => (await run(argv[0], argv.slice(1), { timeout: 20_000 }).catch((e) => ({ stdout: `${e.stdout ?? ''}${e.stderr ?? ''}` }))).stdout;
  return {
    netns,
    dir,
    exec: (argv) => exec([...wrap, ...argv]),
    dig: async (server, name, extra = []) => parseDig(await exec([...wrap, 'dig', `@${server}`, '+tries=1', '+time=3', name, ...extra])),
  };
}

/** node-cache in the namespace as the manifest runs it; resolves once it serves. `path`: its PATH (nftables: one without iptables). */
async function nodeCache(t: Test, n: Node, extra: string[] = [], base = TEMPLATE, path?: string): Promise<Program> {
  writeFileSync(join(n.dir, 'Corefile.base'), base);
  mkdirSync(join(n.dir, 'kube-dns'), { recursive: true });
  writeFileSync(join(n.dir, 'resolv.conf'), 'nameserver 127.0.0.2\n');
  const env = { KUBE_DNS_UPSTREAM_SERVICE_HOST: '127.0.0.1', ...(path ? { PATH: path } : {}) };
  return startProgram(t, 'node-cache', [
    '-localip', `${LOCAL},${CLUSTER_IP}`,
    '-conf', join(n.dir, 'Corefile'),
    '-upstreamsvc', 'kube-dns-upstream',
    `-basecorefile=${join(n.dir, 'Corefile.base')}`,
    `-corefile=${join(n.dir, 'Corefile')}`,
    `-kubednscm=${join(n.dir, 'kube-dns')}`,
    `-resolvconf=${join(n.dir, 'resolv.conf')}`,
    '-metrics-listen-address=127.0.0.1:9353',
    ...extra,
  ], env, ['ip', 'netns', 'exec', n.netns]);
}

const addresses = (r: DigResult) => r.answer.filter((a) => a.type === 'A').map((a) => a.data);

t.test('iptables: interface, rules, answers through both addresses over TCP to kube-dns, teardown', async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const ready = join(n.dir, 'serving');
  const nc = await nodeCache(t, n, [`-readyfile=${ready}`]);
  await nc.waitFor(/DNS listening address=169\.254\.20\.10 port=53/);
  await eventually(() => existsSync(ready), '-readyfile written once it serves', 2000);
  t.match(await n.exec(['ip', '-o', 'addr', 'show', 'dev', 'nodelocaldns']), new RegExp(`inet ${LOCAL}/32.*\\n.*inet ${CLUSTER_IP}/32`), 'the interface holds both addresses');
  const raw = await n.exec(['iptables', '-t', 'raw', '-S']);
  const filter = await n.exec(['iptables', '-t', 'filter', '-S']);
  for (const ip of [LOCAL, CLUSTER_IP]) {
    for (const proto of ['udp', 'tcp']) {
      t.match(raw, `-A PREROUTING -d ${ip}/32 -p ${proto} -m ${proto} --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK`, `raw PREROUTING ${ip} ${proto}`);
      t.match(raw, `-A OUTPUT -s ${ip}/32 -p ${proto} -m ${proto} --sport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK`);
      t.match(filter, `-A INPUT -d ${ip}/32 -p ${proto} -m ${proto} --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j ACCEPT`);
    }
    t.match(raw, `-A OUTPUT -d ${ip}/32 -p tcp -m tcp --dport 8080 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK`, 'the health port');
  }
  t.equal((raw + filter).split('\n').filter((l) => l.includes('NodeLocal DNS Cache')).length, 24, "the original's 12 rules per address");

  for (const server of [LOCAL, CLUSTER_IP]) {
    t.same(addresses(await n.dig(server, 'web.default.svc.cluster.local')), ['10.96.0.5'], `a Service through ${server}`);
    t.same(addresses(await n.dig(server, 'www.example.org')), ['192.0.2.40'], `a name of the world through ${server}`);
  }
  t.equal((await n.dig(LOCAL, 'nosuch.default.svc.cluster.local')).status, 'NXDOMAIN');
  t.match(await n.exec(['ss', '-tn', 'state', 'established', 'dst', '127.0.0.1:53']), /127\.0\.0\.1:53/, 'kube-dns is asked over TCP (force_tcp)');
  t.match(readFileSync(join(n.dir, 'Corefile'), 'utf8'), /forward \. 127\.0\.0\.1 \{\n\s+force_tcp/, 'the rendered Corefile names the upstream Service');
  t.equal(await n.exec(['curl', '-s', `http://${LOCAL}:8080/health`]), 'OK', 'health on the Corefile address');
  t.match(await n.exec(['curl', '-s', 'http://127.0.0.1:9353/metrics']), /coredns_nodecache_setup_errors_total\{errortype="iptables"\} 0/);
  t.match(await n.exec(['curl', '-s', 'http://127.0.0.1:9253/metrics']), /coredns_forward_requests_total\{to="127\.0\.0\.1:53"\} [1-9]/);

  // Rules another agent already flushed are no error at teardown.
  await n.exec(['iptables', '-t', 'raw', '-F', 'PREROUTING']);
  nc.child.kill('SIGTERM');
  t.equal(await nc.exited, 0);
  t.notOk(existsSync(ready), '-readyfile removed when it stops');
  t.notMatch(await n.exec(['iptables-save']), /NodeLocal DNS Cache/, 'rules removed at exit');
  t.match(await n.exec(['ip', 'link', 'show', 'dev', 'nodelocaldns']), /does not exist/, 'interface removed at exit');
});

t.test("CoreDNS's request and cache metrics, per server and zone, as upstream's node-local dashboards read them", async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const nc = await nodeCache(t, n);
  await nc.waitFor(/DNS listening address=169\.254\.20\.10 port=53/);
  // cluster.local. through the node-local address: a miss then a hit, an NXDOMAIN twice, one over TCP.
  for (let i = 0; i < 2; i++) t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local')), ['10.96.0.5']);
  for (let i = 0; i < 2; i++) t.equal((await n.dig(LOCAL, 'nosuch.default.svc.cluster.local')).status, 'NXDOMAIN');
  t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local', ['+tcp'])), ['10.96.0.5']);
  // The root zone, through the other address: counted under its own server.
  t.same(addresses(await n.dig(CLUSTER_IP, 'www.example.org')), ['192.0.2.40']);
  const text = await n.exec(['curl', '-s', `http://${LOCAL}:9253/metrics`]);
  const m = parseSamples(text);
  const local = `server="dns://${LOCAL}:53"`;
  const zone = `${local},zone="cluster.local.",view=""`;
  const cache = `${local},zones="cluster.local.",view=""`;
  t.equal(m.get(`coredns_dns_requests_total{${zone},proto="udp",family="1",type="A"}`), 4, 'requests by proto, family and type');
  t.equal(m.get(`coredns_dns_requests_total{${zone},proto="tcp",family="1",type="A"}`), 1);
  t.equal(m.get(`coredns_dns_responses_total{${zone},rcode="NOERROR",plugin="forward"}`), 1, 'responses by rcode and the plugin that wrote them');
  t.equal(m.get(`coredns_dns_responses_total{${zone},rcode="NOERROR",plugin="cache"}`), 2);
  t.equal(m.get(`coredns_dns_responses_total{${zone},rcode="NXDOMAIN",plugin="cache"}`), 1);
  t.equal(m.get(`coredns_dns_request_duration_seconds_count{${zone},type="A"}`), 5, 'request duration by type');
  t.equal(m.get(`coredns_dns_request_duration_seconds_bucket{${zone},type="A",le="+Inf"}`), 5);
  t.equal(m.get(`coredns_dns_response_size_bytes_count{${zone},proto="tcp"}`), 1, 'response size by proto');
  t.equal(m.get(`coredns_dns_request_size_bytes_count{${zone},proto="tcp"}`), 1, 'request size by proto');
  t.equal(m.get(`coredns_cache_requests_total{${cache}}`), 5, 'cache requests');
  t.equal(m.get(`coredns_cache_hits_total{${local},type="success",zones="cluster.local.",view=""}`), 2, 'hits: success');
  t.equal(m.get(`coredns_cache_hits_total{${local},type="denial",zones="cluster.local.",view=""}`), 1, 'hits: denial (NXDOMAIN)');
  t.equal(m.get(`coredns_cache_misses_total{${cache}}`), 2, 'misses');
  t.equal(m.get(`coredns_dns_requests_total{server="dns://${CLUSTER_IP}:53",zone=".",view="",proto="udp",family="1",type="A"}`), 1, 'the other address, the root zone');
  t.equal(m.get(`coredns_dns_requests_total{server="dns://${CLUSTER_IP}:53",zone="cluster.local.",view="",proto="udp",family="1",type="A"}`), undefined, 'nothing counted where nothing was asked');
  if (promtoolCanRun(t)) {
    const lint = await new Promise<string>((resolve) => execFile(promtoolBin(), ['check', 'metrics'], (_err, stdout, stderr) => resolve(`${stdout}${stderr}`)).stdin!.end(text));
    t.same(lint.split('\n').filter((l) => l.trim() !== ''), [], 'promtool check metrics: a valid exposition, nothing flagged');
  }
});

t.test("-syncinterval repairs what was removed; -skipteardown leaves everything; health's lameduck serves on", async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const nc = await nodeCache(t, n, ['-syncinterval=1s', '-skipteardown'], TEMPLATE.replace(`health ${LOCAL}:8080`, `health ${LOCAL}:8080 {\n        lameduck 1s\n    }`));
  await nc.waitFor(/DNS listening/);
  await n.exec(['iptables', '-t', 'raw', '-F', 'PREROUTING']);
  await n.exec(['ip', 'addr', 'del', `${LOCAL}/32`, 'dev', 'nodelocaldns']);
  await eventually(async () => (await n.exec(['iptables', '-t', 'raw', '-S', 'PREROUTING'])).includes(LOCAL) && (await n.exec(['ip', 'addr', 'show', 'dev', 'nodelocaldns'])).includes(LOCAL), 'repaired', 5000, 200);
  t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local')), ['10.96.0.5'], 'answering again');
  nc.child.kill('SIGTERM');
  await nc.waitFor(/lame duck: still serving .*for=1000ms/);
  t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local')), ['10.96.0.5'], 'answering in its lame duck');
  t.equal(await nc.exited, 0);
  t.match(await n.exec(['iptables-save']), /NodeLocal DNS Cache/, 'rules kept');
  t.match(await n.exec(['ip', 'addr', 'show', 'dev', 'nodelocaldns']), LOCAL, 'interface kept');
});

t.test('nftables where the node has no iptables', async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const bin = join(n.dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['ip', 'nft']) symlinkSync(`/usr/sbin/${tool}`, join(bin, tool));
  const nc = await nodeCache(t, n, [], TEMPLATE, `${bin}:/usr/bin:/bin`);
  await nc.waitFor(/rules added kind=nftables/);
  // The rules come before the listeners: wait for those too before asking.
  await nc.waitFor(/DNS listening address=169\.254\.20\.10/);
  const table = await n.exec(['nft', 'list', 'table', 'inet', 'node-local-dns']);
  t.match(table, /hook prerouting priority raw/);
  t.match(table, new RegExp(`ip daddr ${LOCAL.replaceAll('.', '\\.')} udp dport 53 notrack comment "NodeLocal DNS Cache: skip conntrack"`));
  t.equal(table.split('\n').filter((l) => l.includes('comment "NodeLocal')).length, 24);
  t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local')), ['10.96.0.5']);
  nc.child.kill('SIGTERM');
  t.equal(await nc.exited, 0);
  t.match(await n.exec(['nft', 'list', 'table', 'inet', 'node-local-dns']), /No such file or directory/, 'the table removed at exit');
});

t.test("the kube-dns ConfigMap's stubDomains: served from the start, and when added while it runs", async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  mkdirSync(join(n.dir, 'kube-dns'), { recursive: true });
  writeFileSync(join(n.dir, 'kube-dns', 'stubDomains'), '{"acme.local": ["127.0.0.2"]}');
  const nc = await nodeCache(t, n);
  await nc.waitFor(/DNS listening/);
  t.same(addresses(await n.dig(LOCAL, 'db.acme.local')), ['192.0.2.41'], 'a stub domain to its server');
  t.match(readFileSync(join(n.dir, 'Corefile'), 'utf8'), /acme\.local:53 \{\n {4}errors\n {4}cache 30\n {4}bind 169\.254\.20\.10 10\.96\.0\.10\n {4}forward \. 127\.0\.0\.2\n\}/);
  // The kubelet swaps a ConfigMap volume's files whole; the ConfigMap is read every 10 s.
  writeFileSync(join(n.dir, 'kube-dns', '.stubDomains.tmp'), '{"acme.local": ["127.0.0.2"], "example.org": ["127.0.0.2"]}');
  execFileSync('mv', [join(n.dir, 'kube-dns', '.stubDomains.tmp'), join(n.dir, 'kube-dns', 'stubDomains')]);
  await nc.waitFor(/serving the new Corefile zones=.*example\.org/, 15_000);
  t.same(addresses(await n.dig(LOCAL, 'www.example.org')), ['192.0.2.40'], 'the new block answers');
  t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local')), ['10.96.0.5'], 'and the rest as before');
});

t.test('a Corefile line node-cache cannot serve: exit 1 naming it', async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const nc = await nodeCache(t, n, [], TEMPLATE.replace('    reload\n', '    reload\n    kubernetes cluster.local\n'));
  t.equal(await nc.exited, 1);
  t.match(nc.output(), /cannot start err="Corefile line 8: the plugin `kubernetes` is not served by node-cache/);
});

t.test("the plugins operators add to a Corefile, in node-cache's: hosts, rewrite, template, any, chaos, log, bufsize, forward's except", async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const added = [
    '        any',
    '        chaos v-test',
    '        bufsize 1232',
    '        log . {',
    '            class success',
    '        }',
    '        hosts {',
    '            192.0.2.50 node-hosts.example',
    '            fallthrough',
    '        }',
    '        rewrite name alias.example.org www.example.org',
    '        template IN A tmpl.example {',
    '            answer "{{ .Name }} 60 IN A 192.0.2.60"',
    '        }',
  ];
  const base = TEMPLATE.replace(/(\n\s*\.:53 \{\n)/, `$1${added.join('\n')}\n`).replace(/(\n\s*forward \. __PILLAR__UPSTREAM__SERVERS__)\n/, '$1 {\n        except acme.local\n    }\n');
  t.equal(base.match(/except acme\.local/g)?.length, 1, "the root block and its forward found in the template");
  const nc = await nodeCache(t, n, [], base);
  await nc.waitFor(/DNS listening address=169\.254\.20\.10 port=53/);
  const hosts = await n.dig(LOCAL, 'node-hosts.example');
  t.same(addresses(hosts), ['192.0.2.50'], 'hosts');
  t.equal(hosts.answer[0].ttl, 30, "hosts' TTL under the block's cache 30");
  const alias = await n.dig(LOCAL, 'alias.example.org');
  t.same(alias.answer.map((a) => `${a.name} ${a.data}`), ['alias.example.org. 192.0.2.40'], "rewrite: the world's answer under the asked name");
  t.same(addresses(await n.dig(LOCAL, 'tmpl.example')), ['192.0.2.60'], 'template');
  t.same((await n.dig(LOCAL, 'www.example.org', ['ANY'])).answer.map((a) => a.type), ['HINFO'], "any: RFC 8482's HINFO");
  t.same((await n.dig(LOCAL, 'version.bind', ['TXT', '-c', 'CH'])).answer.map((a) => a.data), ['"v-test"'], 'chaos');
  t.equal((await n.dig(LOCAL, 'nosuch.example.org')).status, 'REFUSED', "the world's dnsmasq has no such name");
  t.equal((await n.dig(LOCAL, 'db.acme.local')).status, 'SERVFAIL', "forward's except: a name the world holds, not forwarded");
  await nc.waitFor(/\[INFO\] \S+ - \d+ "A IN alias\.example\.org\. udp \d+ false \d+" NOERROR qr,aa,rd,ra \d+ [\d.]+s/, 5000);
  t.notMatch(nc.output(), /nosuch\.example\.org/, 'log { class success }: the REFUSED reply not logged');
});

t.test('a successor beside it (a DaemonSet surge): the old one exits without tearing down, at most a datagram lost', async (t) => {
  if (!netnsCanRun(t)) return;
  const n = await node(t);
  const old = await nodeCache(t, n);
  await old.waitFor(/HTTP listening .*port=8080/);
  const successor = await nodeCache(t, n);
  await successor.waitFor(/HTTP listening .*port=8080/);
  t.pass('the successor binds DNS, health and metrics beside the old one (SO_REUSEPORT)');
  writeFileSync(join(n.dir, 'queries'), 'web.default.svc.cluster.local A\nwww.example.org A\n');
  const load = n.exec(['dnsperf', '-s', LOCAL, '-d', join(n.dir, 'queries'), '-l', '4', '-Q', '1000', '-c', '20', '-t', '2']);
  await new Promise((r) => setTimeout(r, 1000));
  old.child.kill('SIGTERM');
  t.equal(await old.exited, 0);
  t.match(old.output(), /another node-cache serves the local address: leaving the interface and rules to it/);
  const perf = await load;
  const lost = Number(/Queries lost:\s+(\d+)/.exec(perf)?.[1]);
  const sent = Number(/Queries sent:\s+(\d+)/.exec(perf)?.[1]);
  t.ok(sent >= 3000, `dnsperf sent ${sent}`);
  // The kernel drops what waits in the old socket's queue when it closes: at most a datagram, rarely.
  t.ok(lost <= 1, `${lost} lost while the old one stopped, at most 1`);
  t.match(await n.exec(['iptables', '-t', 'raw', '-S']), /NodeLocal DNS Cache/, 'rules still there');
  t.match(await n.exec(['ip', 'addr', 'show', 'dev', 'nodelocaldns']), LOCAL, 'interface still there');
  t.same(addresses(await n.dig(LOCAL, 'web.default.svc.cluster.local')), ['10.96.0.5'], 'the successor answers');
  successor.child.kill('SIGTERM');
  t.equal(await successor.exited, 0);
  t.notMatch(await n.exec(['iptables-save']), /NodeLocal DNS Cache/, 'the last one out tears down');
});
