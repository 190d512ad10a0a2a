// Stub domain servers given as names: cluster names through a real kube-dns (for the domain the
// child's args route to it, not a hard-coded cluster.local), others through the system resolver;
// a name that does not resolve yet is left out (the child never sees it) and tried again.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { service, startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import { startNanny } from '../helpers/nanny.ts';
import { WITHIN_SYNC } from '../helpers/nanny-scenarios.ts';

// The stub domain's server, as a cluster Service whose ClusterIP is the loopback the test server is on.
const corpDns = service('infra', 'corp-dns', 'clusterIP: 127.0.0.1');
const other = service('default', 'web', 'clusterIP: 10.96.0.5');

async function servesCorp(port: number): Promise<boolean> {
  const r = await dig(port, 'db.corp.test', 'A', ['+time=1']).catch(() => null);
  return r !== null && answers(r).join() === '192.0.2.10';
}

t.test('a cluster name resolves through -kubednsServer, for the domain the child args send there', async (t) => {
  const stub = await startDnsmasq(t, ['192.0.2.10 db.corp.test']);
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(corpDns), args: ['--domain=my.cluster.'] });
  const n = await startNanny(t, {
    flags: [`-kubednsServer=127.0.0.1:${kd.dnsPort}`],
    childArgs: [`--server=/my.cluster/127.0.0.1#${kd.dnsPort}`],
    files: { stubDomains: JSON.stringify({ 'corp.test': [`corp-dns.infra.svc.my.cluster:${stub.port}`] }) },
  });
  t.match(n.program.output(), new RegExp(`cluster names resolve through kube-dns server=127.0.0.1:${kd.dnsPort} domains=my.cluster`));
  t.ok(await servesCorp(n.dnsPort), 'db.corp.test from the stub server found through kube-dns');
  t.equal(await n.metric('dnsmasq_nanny_stub_resolution_failures_total'), 0);
  t.same(answers(await dig(n.dnsPort, 'corp-dns.infra.svc.my.cluster')), ['127.0.0.1'], 'the child routes the cluster domain to kube-dns too');
});

t.test('a name that does not resolve yet is left out (real dnsmasq keeps running), retried, and added by SIGHUP once it does', async (t) => {
  const stub = await startDnsmasq(t, ['192.0.2.10 db.corp.test']);
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(other), args: ['--domain=my.cluster.'] });
  const n = await startNanny(t, {
    child: 'dnsmasq',
    flags: [`-kubednsServer=127.0.0.1:${kd.dnsPort}`],
    childArgs: [`--server=/my.cluster/127.0.0.1#${kd.dnsPort}`],
    files: { stubDomains: JSON.stringify({ 'corp.test': [`corp-dns.infra.svc.my.cluster:${stub.port}`] }) },
  });
  t.match(n.program.output(), /W dnsmasq-nanny\/resolve: stub domain server name did not resolve, left out until it does domain=corp.test server=corp-dns.infra.svc.my.cluster:\d+ err="kube-dns answered NXDOMAIN/);
  t.notMatch(n.program.output(), /--server=\/corp.test|server=\/corp.test/, 'the name never reaches dnsmasq');
  await eventually(async () => (await n.metric('dnsmasq_nanny_stub_resolution_failures_total')) >= 2, 'tried again at the next sync', WITHIN_SYNC + 1000);
  t.notOk(await servesCorp(n.dnsPort), 'no stub server yet');

  writeFileSync(kd.clusterFile, yamlDocs(other, corpDns));
  await eventually(() => servesCorp(n.dnsPort), 'the stub domain served once kube-dns knows the name', WITHIN_SYNC + 2000);
  t.match(n.program.output(), /stub domain server name resolved domain=corp.test server=corp-dns.infra.svc.my.cluster:\d+ address=127.0.0.1/);
  t.equal(n.childPids().length, 1, 'the same dnsmasq all along');
  t.notMatch(n.program.output(), /exited unexpectedly/);
  t.equal(await n.metric('dnsmasq_nanny_child_reloads_total'), 1);
});

t.test('without a --server for -kubednsServer, cluster.local names go to kube-dns; other names to the system resolver', async (t) => {
  const corp = await startDnsmasq(t, ['192.0.2.10 db.corp.test']);
  const acme = await startDnsmasq(t, ['192.0.2.20 db.acme.test']);
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(corpDns) });
  const n = await startNanny(t, {
    flags: [`-kubednsServer=127.0.0.1:${kd.dnsPort}`],
    files: {
      stubDomains: JSON.stringify({
        'corp.test': [`corp-dns.infra.svc.cluster.local:${corp.port}`],
        'acme.test': [`localhost:${acme.port}`],
      }),
    },
  });
  t.match(n.program.output(), /domains=cluster.local/);
  t.ok(await servesCorp(n.dnsPort), 'the cluster.local name, through kube-dns');
  t.same(answers(await dig(n.dnsPort, 'db.acme.test')), ['192.0.2.20'], 'localhost, through the system resolver (/etc/hosts)');
  t.equal(await n.metric('dnsmasq_nanny_stub_resolution_failures_total'), 0);
});
