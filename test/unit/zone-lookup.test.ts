import t from 'tap';
import { Zone, ZONE_WIDE } from '../../pkg/zone/zone.ts';
import type { LookupResult } from '../../pkg/zone/zone.ts';
import { Rcode, Type } from '../../pkg/dns/constants.ts';
import type { EndpointSetInfo, ServiceInfo } from '../../pkg/cluster/model.ts';

const svc = (name: string, ns: string, extra: Partial<ServiceInfo>): ServiceInfo => ({
  namespace: ns,
  name,
  kind: 'ClusterIP',
  clusterIPs: [],
  externalName: '',
  ports: [],
  publishNotReadyAddresses: false,
  ...extra,
});

function zoneWith(entries: [ServiceInfo, EndpointSetInfo[]][]): Zone {
  let clock = 1000;
  const zone = new Zone({ domain: 'cluster.local', ttl: 30, podRecords: 'insecure', now: () => clock++ });
  zone.updateServices(entries.map(([s, sets]) => [`${s.namespace}/${s.name}`, s, sets]));
  return zone;
}

const values = (r: LookupResult) => r.answers.map((a) => ({ type: a.type, ...(a.data as object) }));
const addresses = (r: LookupResult) => r.answers.map((a) => (a.data as { address: string }).address);

const web = svc('web', 'default', { clusterIPs: ['10.96.10.10', 'fd00:10:96::a'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: '', port: 81, protocol: 'TCP' }] });
const dbSets: EndpointSetInfo[] = [
  {
    namespace: 'default',
    service: 'db',
    id: 'slice/db-1',
    ports: [{ name: 'postgres', port: 5432, protocol: 'TCP' }],
    endpoints: [
      { addresses: ['10.1.0.1'], hostname: 'db-0', ready: true },
      { addresses: ['10.1.0.2'], hostname: 'db-0', ready: true },
      { addresses: ['10.1.0.3'], hostname: '', ready: true },
      { addresses: ['10.1.0.4'], hostname: 'db-2', ready: false },
    ],
  },
];
const db = svc('db', 'default', { kind: 'Headless', ports: [{ name: 'postgres', port: 5432, protocol: 'TCP' }] });

t.test('ClusterIP service: dual-stack A/AAAA, named-port SRV, PTR', async (t) => {
  const z = zoneWith([[web, []]]);
  t.same(values(z.lookup('web.default.svc.cluster.local', Type.A)), [{ type: Type.A, address: '10.96.10.10' }]);
  t.same(values(z.lookup('web.default.svc.cluster.local', Type.AAAA)), [{ type: Type.AAAA, address: 'fd00:10:96::a' }]);
  const srv = z.lookup('_http._tcp.web.default.svc.cluster.local', Type.SRV);
  t.same(values(srv), [{ type: Type.SRV, priority: 10, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }]);
  t.same(srv.additionals.map((a) => a.type).sort(), [Type.A, Type.AAAA], 'glue for the target');
  t.equal(z.lookup('_81._tcp.web.default.svc.cluster.local', Type.SRV).rcode, Rcode.NXDOMAIN, 'unnamed ports have no SRV');
  t.same(z.reverse('10.96.10.10'), ['web.default.svc.cluster.local']);
  t.same(z.reverse('fd00:10:96::a'), ['web.default.svc.cluster.local']);
});

t.test('headless: every IP of a hostname, dashed names, not-ready skipped, SRV per endpoint', async (t) => {
  const z = zoneWith([[db, dbSets]]);
  t.same(addresses(z.lookup('db.default.svc.cluster.local', Type.A)).sort(), ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
  t.same(addresses(z.lookup('db-0.db.default.svc.cluster.local', Type.A)), ['10.1.0.1', '10.1.0.2']);
  t.equal(z.lookup('db-2.db.default.svc.cluster.local', Type.A).rcode, Rcode.NXDOMAIN, 'not-ready endpoint unpublished');
  t.same(values(z.lookup('10-1-0-3.db.default.svc.cluster.local', Type.A)), [{ type: Type.A, address: '10.1.0.3' }]);
  const srv = z.lookup('_postgres._tcp.db.default.svc.cluster.local', Type.SRV);
  t.same(srv.answers.map((a) => (a.data as { target: string }).target).sort(), ['10-1-0-3.db.default.svc.cluster.local', 'db-0.db.default.svc.cluster.local']);
  t.equal(srv.additionals.length, 3, 'glue for each target address');
  t.same(z.reverse('10.1.0.2'), ['db-0.db.default.svc.cluster.local']);
});

t.test('publishNotReadyAddresses publishes not-ready endpoints; no ready endpoints is NXDOMAIN', async (t) => {
  const z = zoneWith([[{ ...db, publishNotReadyAddresses: true }, dbSets]]);
  t.equal(z.lookup('db-2.db.default.svc.cluster.local', Type.A).answers.length, 1);
  const empty = zoneWith([[db, [{ ...dbSets[0], endpoints: [{ addresses: ['10.1.0.9'], hostname: '', ready: false }] }]]]);
  t.equal(empty.lookup('db.default.svc.cluster.local', Type.A).rcode, Rcode.NXDOMAIN);
  t.notOk(empty.publishes('default/db'), 'a headless service with nothing published publishes nothing');
  t.ok(z.publishes('default/db'));
  t.ok(zoneWith([[svc('ext', 'default', { kind: 'ExternalName', externalName: 'example.com' }), []]]).publishes('default/ext'));
});

t.test('negative answers: NXDOMAIN only when nothing exists below; SOA in authority', async (t) => {
  const z = zoneWith([[web, []]]);
  for (const name of ['svc.cluster.local', 'default.svc.cluster.local', 'cluster.local']) {
    const r = z.lookup(name, Type.A);
    t.equal(r.rcode, Rcode.NOERROR, `${name} is NODATA`);
    t.equal(r.answers.length, 0);
    t.equal(r.authorities[0].type, Type.SOA);
  }
  const nx = z.lookup('nothere.default.svc.cluster.local', Type.A);
  t.equal(nx.rcode, Rcode.NXDOMAIN);
  t.equal(nx.authorities[0].type, Type.SOA);
  t.equal(z.lookup('other.svc.cluster.local', Type.A).rcode, Rcode.NXDOMAIN, 'empty namespace');
  t.equal(z.lookup('web.default.svc.cluster.local', Type.TXT).rcode, Rcode.NOERROR, 'other type is NODATA');
});

t.test('ExternalName: CNAME, in-zone targets chased, external ones handed back', async (t) => {
  const alias = svc('alias', 'default', { kind: 'ExternalName', externalName: 'web.default.svc.cluster.local' });
  const ext = svc('search', 'default', { kind: 'ExternalName', externalName: 'www.example.com' });
  const z = zoneWith([[web, []], [alias, []], [ext, []]]);
  const r = z.lookup('alias.default.svc.cluster.local', Type.A);
  t.same(r.answers.map((a) => a.type), [Type.CNAME, Type.A]);
  t.equal(r.chase, null);
  const e = z.lookup('search.default.svc.cluster.local', Type.AAAA);
  t.same(values(e), [{ type: Type.CNAME, target: 'www.example.com' }]);
  t.equal(e.chase, 'www.example.com');
  t.equal(z.lookup('search.default.svc.cluster.local', Type.CNAME).chase, null);
});

t.test('apex SOA/NS, dns-version TXT, pod records, ANY', async (t) => {
  const z = zoneWith([[web, []]]);
  t.equal(z.lookup('cluster.local', Type.SOA).answers[0].type, Type.SOA);
  t.same(values(z.lookup('cluster.local', Type.NS)), [{ type: Type.NS, target: 'ns.dns.cluster.local' }]);
  const v = z.lookup('dns-version.cluster.local', Type.TXT);
  t.same(values(v), [{ type: Type.TXT, texts: ['1.1.0'] }]);
  t.equal(v.answers[0].ttl, 28800);
  t.same(values(z.lookup('10-2-3-4.default.pod.cluster.local', Type.A)), [{ type: Type.A, address: '10.2.3.4' }]);
  t.same(values(z.lookup('fd00--1.default.pod.cluster.local', Type.AAAA)), [{ type: Type.AAAA, address: 'fd00::1' }]);
  t.equal(z.lookup('not-an-ip.default.pod.cluster.local', Type.A).rcode, Rcode.NXDOMAIN);
  t.equal(z.lookup('default.pod.cluster.local', Type.A).rcode, Rcode.NOERROR);
  const any = z.lookup('web.default.svc.cluster.local', Type.ANY);
  t.ok(any.answers.length >= 1 && any.answers.every((a) => a.type === any.answers[0].type), 'one RRset');
  const off = new Zone({ domain: 'cluster.local', ttl: 30, podRecords: 'disabled' });
  t.equal(off.lookup('10-2-3-4.default.pod.cluster.local', Type.A).rcode, Rcode.NXDOMAIN);
  // CoreDNS's `pods verified`: only a pod's own address, in its own namespace.
  const verified = new Zone({ domain: 'cluster.local', ttl: 30, podRecords: 'verified', podAt: (ip, ns) => ip === '10.2.3.4' && ns === 'default' });
  t.same(values(verified.lookup('10-2-3-4.default.pod.cluster.local', Type.A)), [{ type: Type.A, address: '10.2.3.4' }]);
  t.equal(verified.lookup('10-2-3-5.default.pod.cluster.local', Type.A).rcode, Rcode.NXDOMAIN, 'no pod there');
  t.equal(verified.lookup('10-2-3-4.other.pod.cluster.local', Type.A).rcode, Rcode.NXDOMAIN, 'a pod of another namespace');
  t.equal(verified.lookup('default.pod.cluster.local', Type.A).rcode, Rcode.NOERROR);
});

t.test('updates replace and delete cleanly; serial moves', async (t) => {
  const z = zoneWith([[web, []], [db, dbSets]]);
  const s0 = z.serial;
  z.updateServices([['default/web', { ...web, clusterIPs: ['10.96.10.11'] }, []]]);
  t.ok(z.serial > s0);
  t.same(z.reverse('10.96.10.10'), [], 'old PTR gone');
  t.same(values(z.lookup('web.default.svc.cluster.local', Type.A)), [{ type: Type.A, address: '10.96.10.11' }]);
  z.updateServices([['default/db', null, []], ['default/web', null, []]]);
  t.equal(z.lookup('default.svc.cluster.local', Type.A).rcode, Rcode.NXDOMAIN, 'namespace node pruned');
  t.equal(z.lookup('svc.cluster.local', Type.A).rcode, Rcode.NOERROR, 'svc stays');
  t.equal(z.counts().ptrs, 0);
});

t.test('owner: the one service an answer draws on, else ZONE_WIDE; updateServices says what it touched', async (t) => {
  const ext = svc('ext', 'default', { kind: 'ExternalName', externalName: 'web.default.svc.cluster.local' });
  const z = zoneWith([[web, []], [db, dbSets], [ext, []]]);
  t.equal(z.lookup('web.default.svc.cluster.local', Type.A).owner, 'default/web');
  t.equal(z.lookup('_postgres._tcp.db.default.svc.cluster.local', Type.SRV).owner, 'default/db', 'SRV with its glue');
  t.equal(z.lookup('db-0.db.default.svc.cluster.local', Type.A).owner, 'default/db');
  t.equal(z.lookup('ext.default.svc.cluster.local', Type.A).owner, ZONE_WIDE, 'a CNAME to another service: two owners');
  t.equal(z.lookup('nothing.default.svc.cluster.local', Type.A).owner, ZONE_WIDE, 'NXDOMAIN carries the SOA');
  t.equal(z.lookup('web.default.svc.cluster.local', Type.TXT).owner, ZONE_WIDE, 'NODATA carries the SOA');
  t.equal(z.lookup('cluster.local', Type.SOA).owner, ZONE_WIDE);
  const touched = z.updateServices([['default/web', svc('web', 'default', { clusterIPs: ['10.96.10.11'] }), []], ['default/gone', null, []]]);
  t.same(touched.sort(), [ZONE_WIDE, '10.96.10.10', '10.96.10.11', 'default/gone', 'default/web', 'fd00:10:96::a'].sort(), 'keys, old and new addresses, the zone');
  t.same(z.updateServices([]), [], 'nothing listed, nothing touched');
});

t.test('a change touches only the addresses whose names changed: one endpoint of a large Service turning ready touches its own', async (t) => {
  const endpoints = Array.from({ length: 300 }, (_, n) => ({ addresses: [`10.1.${n >> 8}.${n & 255}`], hostname: `h-${n}`, ready: n < 299 }));
  const set = (eps: typeof endpoints): EndpointSetInfo => ({ namespace: 'default', service: 'big', id: 'slice/big-1', ports: [], endpoints: eps });
  const big = svc('big', 'default', { kind: 'Headless' });
  // Another Service shares an address with it (a pod behind two headless Services).
  const other = svc('other', 'default', { kind: 'Headless' });
  const z = zoneWith([[big, [set(endpoints)]], [other, [{ ...set([{ addresses: ['10.1.0.7'], hostname: 'o', ready: true }]), service: 'other', id: 'slice/other-1' }]]]);
  const readied = endpoints.map((e, n) => (n === 299 ? { ...e, ready: true } : e));
  t.same(z.updateServices([['default/big', big, [set(readied)]]]).sort(), [ZONE_WIDE, '10.1.1.43', 'default/big'].sort());
  t.same(z.reverse('10.1.1.43'), ['h-299.big.default.svc.cluster.local'], 'the new endpoint has its PTR');
  const renamed = readied.map((e, n) => (n === 7 ? { ...e, hostname: 'seven' } : e));
  t.same(z.updateServices([['default/big', big, [set(renamed)]]]).sort(), [ZONE_WIDE, '10.1.0.7', 'default/big'].sort(), 'a renamed endpoint: its address');
  t.same(z.reverse('10.1.0.7').sort(), ['o.other.default.svc.cluster.local', 'seven.big.default.svc.cluster.local'], 'the other Service keeps its PTR');
  t.same(z.reverse('10.1.0.8'), ['h-8.big.default.svc.cluster.local'], 'an untouched address keeps its PTR');
  // One address under two names of the Service (two endpoints sharing it): both PTRs, one changed alone.
  const twice = [...renamed, { addresses: ['10.1.0.8'], hostname: 'eight', ready: true }];
  t.same(z.updateServices([['default/big', big, [set(twice)]]]).sort(), [ZONE_WIDE, '10.1.0.8', 'default/big'].sort());
  t.same(z.reverse('10.1.0.8').sort(), ['eight.big.default.svc.cluster.local', 'h-8.big.default.svc.cluster.local']);
  t.same(z.updateServices([['default/big', big, [set(twice.map((e) => (e.hostname === 'eight' ? { ...e, hostname: 'ocho' } : e)))]]]).sort(), [ZONE_WIDE, '10.1.0.8', 'default/big'].sort());
  t.same(z.reverse('10.1.0.8').sort(), ['h-8.big.default.svc.cluster.local', 'ocho.big.default.svc.cluster.local']);
  t.same(z.updateServices([['default/big', big, [set(renamed)]]]).sort(), [ZONE_WIDE, '10.1.0.8', 'default/big'].sort(), 'back to one name');
  t.same(z.reverse('10.1.0.8'), ['h-8.big.default.svc.cluster.local']);
  t.equal(z.updateServices([['default/big', null, []]]).length, 2 + 300, 'deleted: every address it published');
  t.same(z.reverse('10.1.0.7'), ['o.other.default.svc.cluster.local']);
  t.equal(z.counts().ptrs, 1);
});
