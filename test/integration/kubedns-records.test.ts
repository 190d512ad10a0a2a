// Every record kind of the Kubernetes DNS spec 1.1.0, asked of the real kube-dns binary with dig,
// over UDP and TCP. Upstream and stub-domain servers are real dnsmasq instances on loopback.

import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dig, answers } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { startKubeDns, yamlDocs, service, endpointSlice } from '../helpers/kubedns.ts';

const cluster = yamlDocs(
  service('default', 'kubernetes', `
clusterIP: 10.96.0.1
clusterIPs: [10.96.0.1]
ports:
- {name: https, port: 443, protocol: TCP}`),
  service('default', 'web', `
clusterIP: 10.96.10.10
clusterIPs: [10.96.10.10, "fd00:10:96::a"]
ipFamilies: [IPv4, IPv6]
ports:
- {name: http, port: 80, protocol: TCP}
- {name: dns, port: 53, protocol: UDP}`),
  service('default', 'db', `
clusterIP: None
ports:
- {name: postgres, port: 5432}`),
  endpointSlice('default', 'db', 'db-v4', 'IPv4', `
endpoints:
- {addresses: [10.1.0.1], hostname: db-0, conditions: {ready: true}}
- {addresses: [10.1.0.2], hostname: db-0, conditions: {ready: true}}
- {addresses: [10.1.0.3], conditions: {ready: true}}
- {addresses: [10.1.0.4], hostname: db-2, conditions: {ready: false}}
ports:
- {name: postgres, port: 5432, protocol: TCP}`),
  endpointSlice('default', 'db', 'db-v6', 'IPv6', `
endpoints:
- {addresses: ["fd00:1::5"], hostname: db-1}
ports:
- {name: postgres, port: 5432, protocol: TCP}`),
  service('default', 'peers', `
clusterIP: None
publishNotReadyAddresses: true`),
  endpointSlice('default', 'peers', 'peers-x', 'IPv4', `
endpoints:
- {addresses: [10.2.0.1], conditions: {ready: false}}
ports:
- {name: gossip, port: 7946, protocol: UDP}`),
  service('default', 'empty', `clusterIP: None`),
  service('default', 'search', `
type: ExternalName
externalName: www.example.com`),
  service('default', 'alias', `
type: ExternalName
externalName: web.default.svc.cluster.local.`),
  service('default', 'stubbed', `
type: ExternalName
externalName: host.acme.local`),
  service('apps', 'legacy', `clusterIP: None`),
  `apiVersion: v1
kind: Endpoints
metadata:
  name: legacy
  namespace: apps
subsets:
- addresses:
  - {ip: 10.3.0.1, hostname: legacy-0}
  ports:
  - {name: http, port: 8080, protocol: TCP}`,
);

t.test('kube-dns answers the DNS spec with dig', async (t) => {
  const upstream = await startDnsmasq(t, ['192.0.2.53 www.example.com', '192.0.2.80 other.example.org']);
  const stub = await startDnsmasq(t, ['203.0.113.7 host.acme.local']);
  const configDir = join(process.env.TMPDIR ?? '/tmp', `kdt-config-${process.pid}`);
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, 'upstreamNameservers'), JSON.stringify([`127.0.0.1:${upstream.port}`]));
  writeFileSync(join(configDir, 'stubDomains'), JSON.stringify({ 'acme.local': [`127.0.0.1:${stub.port}`] }));
  const kd = await startKubeDns(t, { clusterYaml: cluster, args: [`--config-dir=${configDir}`] });
  await kd.program.waitFor(/upstreams configured.*stubDomains=acme.local/);
  const P = kd.dnsPort;

  for (const transport of ['udp', 'tcp']) {
    const x = transport === 'tcp' ? ['+tcp'] : [];
    t.test(`ClusterIP service (${transport})`, async (t) => {
      const a = await dig(P, 'kubernetes.default.svc.cluster.local', 'A', x);
      t.equal(a.status, 'NOERROR');
      t.ok(a.flags.includes('aa'), 'authoritative');
      t.same(answers(a), ['10.96.0.1']);
      t.equal(a.answer[0].ttl, 30, 'default --ttl 30');
      t.same(answers(await dig(P, 'web.default.svc.cluster.local', 'AAAA', x)), ['fd00:10:96::a']);
      const nodata = await dig(P, 'kubernetes.default.svc.cluster.local', 'AAAA', x);
      t.equal(nodata.status, 'NOERROR', 'single-stack: AAAA is NODATA');
      t.equal(nodata.answer.length, 0);
      t.equal(nodata.authority[0]?.type, 'SOA');
      const srv = await dig(P, '_http._tcp.web.default.svc.cluster.local', 'SRV', x);
      t.same(answers(srv), ['10 100 80 web.default.svc.cluster.local.']);
      t.same(srv.additional.map((r) => r.data).sort(), ['10.96.10.10', 'fd00:10:96::a']);
      t.same(answers(await dig(P, '_dns._udp.web.default.svc.cluster.local', 'SRV', x)), ['10 100 53 web.default.svc.cluster.local.']);
      t.same(answers(await dig(P, '', 'PTR', ['-x', '10.96.10.10', ...x])), ['web.default.svc.cluster.local.']);
      t.same(answers(await dig(P, '', 'PTR', ['-x', 'fd00:10:96::a', ...x])), ['web.default.svc.cluster.local.']);
    });

    t.test(`headless service (${transport})`, async (t) => {
      t.same(answers(await dig(P, 'db.default.svc.cluster.local', 'A', x)), ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
      t.same(answers(await dig(P, 'db.default.svc.cluster.local', 'AAAA', x)), ['fd00:1::5']);
      t.same(answers(await dig(P, 'db-0.db.default.svc.cluster.local', 'A', x)), ['10.1.0.1', '10.1.0.2'], 'every IP of a hostname');
      t.same(answers(await dig(P, '10-1-0-3.db.default.svc.cluster.local', 'A', x)), ['10.1.0.3'], 'no hostname: dashed IP');
      t.same(answers(await dig(P, 'db-1.db.default.svc.cluster.local', 'AAAA', x)), ['fd00:1::5']);
      t.equal((await dig(P, 'db-2.db.default.svc.cluster.local', 'A', x)).status, 'NXDOMAIN', 'not ready: unpublished');
      const srv = await dig(P, '_postgres._tcp.db.default.svc.cluster.local', 'SRV', x);
      t.same(answers(srv), [
        '10 33 5432 10-1-0-3.db.default.svc.cluster.local.',
        '10 33 5432 db-0.db.default.svc.cluster.local.',
        '10 33 5432 db-1.db.default.svc.cluster.local.',
      ]);
      for (const target of srv.answer.map((r) => r.data.split(' ')[3])) {
        t.ok((await dig(P, target, target.startsWith('db-1') ? 'AAAA' : 'A', x)).answer.length > 0, `SRV target ${target} resolves`);
      }
      t.same(answers(await dig(P, '', 'PTR', ['-x', '10.1.0.2', ...x])), ['db-0.db.default.svc.cluster.local.']);
      t.same(answers(await dig(P, '', 'PTR', ['-x', 'fd00:1::5', ...x])), ['db-1.db.default.svc.cluster.local.']);
      t.same(answers(await dig(P, 'peers.default.svc.cluster.local', 'A', x)), ['10.2.0.1'], 'publishNotReadyAddresses');
      t.equal((await dig(P, 'empty.default.svc.cluster.local', 'A', x)).status, 'NXDOMAIN', 'no ready endpoints');
      t.same(answers(await dig(P, 'legacy.apps.svc.cluster.local', 'A', x)), ['10.3.0.1'], 'core/v1 Endpoints');
      t.same(answers(await dig(P, '_http._tcp.legacy.apps.svc.cluster.local', 'SRV', x)), ['10 100 8080 legacy-0.legacy.apps.svc.cluster.local.']);
    });

    t.test(`ExternalName (${transport})`, async (t) => {
      const ext = await dig(P, 'search.default.svc.cluster.local', 'A', x);
      t.same(ext.answer.map((r) => `${r.type} ${r.data}`), ['CNAME www.example.com.', 'A 192.0.2.53'], 'target chased upstream');
      const alias = await dig(P, 'alias.default.svc.cluster.local', 'A', x);
      t.same(alias.answer.map((r) => `${r.type} ${r.data}`), ['CNAME web.default.svc.cluster.local.', 'A 10.96.10.10'], 'in-cluster target');
      const stubbed = await dig(P, 'stubbed.default.svc.cluster.local', 'A', x);
      t.same(stubbed.answer.map((r) => `${r.type} ${r.data}`), ['CNAME host.acme.local.', 'A 203.0.113.7'], 'target through its stub domain (kubernetes/dns#243)');
      t.same(answers(await dig(P, 'search.default.svc.cluster.local', 'CNAME', x)), ['www.example.com.']);
    });
  }

  t.test('zone apex, version, negative answers, pods', async (t) => {
    const soa = await dig(P, 'cluster.local', 'SOA');
    t.match(soa.answer[0]?.data ?? '', /^ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 30$/);
    t.same(answers(await dig(P, 'cluster.local', 'NS')), ['ns.dns.cluster.local.']);
    t.same(answers(await dig(P, 'dns-version.cluster.local', 'TXT')), ['"1.1.0"']);
    const nx = await dig(P, 'nothere.default.svc.cluster.local', 'A');
    t.equal(nx.status, 'NXDOMAIN');
    t.ok(nx.flags.includes('aa'));
    t.equal(nx.authority[0]?.type, 'SOA', 'SOA in authority (RFC 2308)');
    for (const name of ['svc.cluster.local', 'default.svc.cluster.local', 'cluster.local']) {
      const r = await dig(P, name, 'A');
      t.equal(r.status, 'NOERROR', `${name}: NODATA, something exists below`);
      t.equal(r.answer.length, 0);
    }
    t.equal((await dig(P, 'nons.svc.cluster.local', 'A')).status, 'NXDOMAIN');
    t.same(answers(await dig(P, '10-2-3-4.default.pod.cluster.local', 'A')), ['10.2.3.4']);
    t.same(answers(await dig(P, 'fd00--7.default.pod.cluster.local', 'AAAA')), ['fd00::7']);
  });

  t.test('ANY, AXFR, CHAOS, case, forwarding', async (t) => {
    const any = await dig(P, 'web.default.svc.cluster.local', 'ANY');
    t.equal(any.status, 'NOERROR', 'ANY is answered (RFC 8482), not refused');
    t.ok(any.answer.length > 0);
    const axfr = await dig(P, 'cluster.local', 'AXFR');
    t.match(axfr.raw, /Transfer failed/);
    const version = await dig(P, 'version.bind', 'TXT', ['-c', 'CH']);
    t.match(answers(version)[0], /kube-dns-ts/);
    const mixed = await dig(P, 'KuBeRnEtEs.DeFaUlT.sVc.ClUsTeR.LoCaL', 'A');
    t.equal(mixed.question, 'KuBeRnEtEs.DeFaUlT.sVc.ClUsTeR.LoCaL.', 'question echoed as asked');
    t.equal(mixed.answer[0]?.name, 'KuBeRnEtEs.DeFaUlT.sVc.ClUsTeR.LoCaL.', 'answer owner echoes the asker case');
    t.same(answers(mixed), ['10.96.0.1']);
    const again = await dig(P, 'kubernetes.DEFAULT.svc.cluster.local', 'A');
    t.equal(again.answer[0]?.name, 'kubernetes.DEFAULT.svc.cluster.local.', 'cached answer echoes the new case');
    t.same(answers(await dig(P, 'www.example.com', 'A')), ['192.0.2.53'], 'forwarded upstream');
    t.same(answers(await dig(P, 'www.example.com', 'A', ['+tcp'])), ['192.0.2.53'], 'forwarded over TCP');
    t.same(answers(await dig(P, 'host.acme.local', 'A')), ['203.0.113.7'], 'stub domain');
  });
});
