import t from 'tap';
import dns2 from 'dns2';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { DnsEncodeError, encodeMessage, parseMessage } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message, ResourceRecord } from '../../pkg/dns/message.ts';

// dns2 is the independent decoder/encoder these tests compare against (never used in production).
const { Packet } = dns2 as unknown as { Packet: Dns2Packet };
interface Dns2Packet {
  parse(buf: Buffer): { header: Record<string, number>; questions: Dns2Record[]; answers: Dns2Record[]; authorities: Dns2Record[]; additionals: Dns2Record[]; errors: unknown[] };
  new (): { header: Record<string, number>; questions: unknown[]; answers: unknown[]; authorities: unknown[]; additionals: unknown[]; toBuffer(): Buffer };
  Resource: { EDNS(rdata: unknown[], opts: Record<string, unknown>): unknown };
}
type Dns2Record = Record<string, unknown>;

const PRIVATE_TYPE = 65280;

function rr(name: string, type: number, data: ResourceRecord['data'], ttl = 300): ResourceRecord {
  return { name, type, class: Class.IN, ttl, data };
}

/** A response holding one record of every type we interpret, plus an unknown one. */
function everyType(): Message {
  const m = emptyMessage(0x1234);
  m.qr = true;
  m.aa = true;
  m.rd = true;
  m.ra = true;
  const n = 'svc.default.svc.cluster.local';
  m.questions.push({ name: n, type: Type.ANY, class: Class.IN });
  m.answers.push(
    rr(n, Type.A, { address: '10.0.0.1' }),
    rr(n, Type.AAAA, { address: '2001:db8::1' }),
    rr(n, Type.CNAME, { target: 'other.default.svc.cluster.local' }),
    rr('1.0.0.10.in-addr.arpa', Type.PTR, { target: n }),
    rr(n, Type.MX, { preference: 10, exchange: 'mail.cluster.local' }),
    rr('_http._tcp.' + n, Type.SRV, { priority: 10, weight: 100, port: 80, target: n }),
    rr(n, Type.TXT, { texts: ['hello world', 'wörld', ''] }),
    rr(n, PRIVATE_TYPE, { raw: new Uint8Array([1, 2, 3, 4]) }),
  );
  m.authorities.push(
    rr('cluster.local', Type.NS, { target: 'ns.dns.cluster.local' }),
    rr('cluster.local', Type.SOA, {
      mname: 'ns.dns.cluster.local',
      rname: 'hostmaster.cluster.local',
      serial: 1523602800,
      refresh: 28800,
      retry: 7200,
      expire: 604800,
      minimum: 60,
    }),
  );
  m.additionals.push(rr('box.cluster.local', Type.HINFO, { cpu: 'x86_64', os: 'linux' }));
  m.edns = { udpSize: 1232, version: 0, do: true, extendedRcode: 0, options: [{ code: 10, data: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) }] };
  return m;
}

t.test('every record type survives encode then parse', async (t) => {
  const m = everyType();
  const back = parseMessage(encodeMessage(m).bytes);
  t.same(back, m);
});

t.test('dns2 decodes our encoding of every record type to the same records', async (t) => {
  const m = everyType();
  const p = Packet.parse(encodeMessage(m).bytes);
  t.same(p.errors, []);
  t.match(p.header, { id: 0x1234, qr: 1, aa: 1, rd: 1, ra: 1, rcode: 0, qdcount: 1, ancount: 8, nscount: 2, arcount: 2 });
  t.same(p.questions, [{ name: 'svc.default.svc.cluster.local', type: Type.ANY, class: Class.IN }]);
  const n = 'svc.default.svc.cluster.local';
  t.match(p.answers, [
    { name: n, type: Type.A, ttl: 300, address: '10.0.0.1' },
    { name: n, type: Type.AAAA, address: '2001:db8::1' },
    { name: n, type: Type.CNAME, domain: 'other.default.svc.cluster.local' },
    { name: '1.0.0.10.in-addr.arpa', type: Type.PTR, domain: n },
    { name: n, type: Type.MX, priority: 10, exchange: 'mail.cluster.local' },
    { name: '_http._tcp.' + n, type: Type.SRV, priority: 10, weight: 100, port: 80, target: n },
    { name: n, type: Type.TXT, data: ['hello world', 'wörld', ''] },
    { name: n, type: PRIVATE_TYPE },
  ]);
  t.same([...(p.answers[7].data as Buffer)], [1, 2, 3, 4]);
  t.match(p.authorities, [
    { name: 'cluster.local', type: Type.NS, ns: 'ns.dns.cluster.local' },
    {
      type: Type.SOA,
      primary: 'ns.dns.cluster.local',
      admin: 'hostmaster.cluster.local',
      serial: 1523602800,
      refresh: 28800,
      retry: 7200,
      expiration: 604800,
      minimum: 60,
    },
  ]);
  // dns2 keeps HINFO as raw bytes: two <character-string>s.
  t.same([...(p.additionals[0].data as Buffer)], [6, ...Buffer.from('x86_64'), 5, ...Buffer.from('linux')]);
  t.match(p.additionals[1], { type: Type.OPT, class: 1232, doFlag: true, version: 0, extendedRcode: 0 });
});

t.test('we decode what dns2 encodes', async (t) => {
  const p = new Packet();
  p.header.id = 4242;
  p.header.qr = 1;
  p.header.aa = 1;
  p.header.rcode = Rcode.NXDOMAIN;
  p.questions.push({ name: 'missing.example', type: Type.AAAA, class: Class.IN });
  p.answers.push(
    { name: 'a.example', type: Type.A, class: Class.IN, ttl: 60, address: '192.0.2.7' },
    { name: 'a.example', type: Type.AAAA, class: Class.IN, ttl: 60, address: '2001:0db8:0000:0000:0000:0000:0002:0001' },
    { name: 'a.example', type: Type.CNAME, class: Class.IN, ttl: 60, domain: 'b.example' },
    { name: '_x._udp.a.example', type: Type.SRV, class: Class.IN, ttl: 60, priority: 1, weight: 2, port: 53, target: 'a.example' },
    { name: 'a.example', type: Type.TXT, class: Class.IN, ttl: 60, data: ['v=1', 'two'] },
    { name: 'a.example', type: Type.MX, class: Class.IN, ttl: 60, exchange: 'mx.a.example', priority: 5 },
  );
  p.authorities.push({
    name: 'example', type: Type.SOA, class: Class.IN, ttl: 60,
    primary: 'ns.example', admin: 'root.example', serial: 7, refresh: 1, retry: 2, expiration: 3, minimum: 4,
  });
  p.additionals.push(Packet.Resource.EDNS([], { udpPayloadSize: 4096, doFlag: true }));
  const m = parseMessage(p.toBuffer());
  t.match(m, {
    id: 4242, qr: true, aa: true, rcode: Rcode.NXDOMAIN,
    questions: [{ name: 'missing.example', type: Type.AAAA, class: Class.IN }],
    edns: { udpSize: 4096, do: true, version: 0, extendedRcode: 0, options: [] },
    additionals: [],
  });
  t.same(m.answers.map((a) => a.data), [
    { address: '192.0.2.7' },
    { address: '2001:db8::2:1' },
    { target: 'b.example' },
    { priority: 1, weight: 2, port: 53, target: 'a.example' },
    { texts: ['v=1', 'two'] },
    { preference: 5, exchange: 'mx.a.example' },
  ]);
  t.same(m.authorities[0].data, { mname: 'ns.example', rname: 'root.example', serial: 7, refresh: 1, retry: 2, expire: 3, minimum: 4 });
});

t.test('compression: owner and RDATA names point back, SRV targets stay whole', async (t) => {
  const m = emptyMessage();
  m.questions.push({ name: 'Web.Default.svc.cluster.local', type: Type.SRV, class: Class.IN });
  m.answers.push(
    rr('web.default.svc.cluster.local', Type.SRV, { priority: 0, weight: 0, port: 1, target: 'web.default.svc.cluster.local' }),
    rr('WEB.default.svc.cluster.local', Type.CNAME, { target: 'db.default.svc.cluster.local' }),
  );
  const { bytes } = encodeMessage(m);
  const qEnd = 12 + 31 + 4;
  // First answer owner: a pointer to the question name at offset 12, whatever its case.
  t.same([...bytes.subarray(qEnd, qEnd + 2)], [0xc0, 12]);
  // SRV RDATA: 6 fixed bytes, then the full uncompressed target (31 bytes).
  const rdlen = bytes.readUInt16BE(qEnd + 2 + 8);
  t.equal(rdlen, 6 + 31);
  t.equal(bytes.indexOf(Buffer.from('\x03web\x07default'), qEnd), qEnd + 2 + 10 + 6);
  // CNAME target: "db" then a pointer to "default.svc.cluster.local" inside the question.
  const cnameOwner = qEnd + 2 + 10 + rdlen;
  t.same([...bytes.subarray(cnameOwner, cnameOwner + 2)], [0xc0, 12]);
  const cnameRdata = cnameOwner + 2 + 10;
  t.same([...bytes.subarray(cnameRdata, cnameRdata + 5)], [2, 0x64, 0x62, 0xc0, 12 + 4]);
  t.equal(bytes.length, cnameRdata + 5);
  // And it all reads back, case as written where it was written.
  const back = parseMessage(bytes);
  t.equal(back.answers[0].name, 'Web.Default.svc.cluster.local');
  t.equal((back.answers[1].data as { target: string }).target, 'db.Default.svc.cluster.local');
});

t.test('names: escapes, trailing dots and the root round-trip', async (t) => {
  const names = ['', 'a\\.b.example', 'back\\\\slash', 'sp\\032ace.x', 'bin\\000\\255', 'UPPER.lower'];
  for (const name of names) {
    const m = emptyMessage();
    m.questions.push({ name, type: Type.A, class: Class.IN });
    t.equal(parseMessage(encodeMessage(m).bytes).questions[0].name, name, name);
  }
  const m = emptyMessage();
  m.questions.push({ name: 'fqdn.example.', type: Type.A, class: Class.IN });
  m.answers.push(rr('.', Type.NS, { target: 'a.root-servers.net.' }));
  const back = parseMessage(encodeMessage(m).bytes);
  t.equal(back.questions[0].name, 'fqdn.example');
  t.equal(back.answers[0].name, '');
  t.same(back.answers[0].data, { target: 'a.root-servers.net' });
  // "\065" and "A" are the same byte.
  const e = emptyMessage();
  e.questions.push({ name: '\\065b', type: Type.A, class: Class.IN });
  t.equal(parseMessage(encodeMessage(e).bytes).questions[0].name, 'Ab');
});

t.test('AAAA text forms are read in any form and written canonically (RFC 5952)', async (t) => {
  const cases: Array<[string, string]> = [
    ['2001:0DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::ffff:192.0.2.1', '::ffff:192.0.2.1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
    ['fe80:0:0:0:200:5eff:fe00:5301', 'fe80::200:5eff:fe00:5301'],
  ];
  for (const [input, want] of cases) {
    const m = emptyMessage();
    m.answers.push(rr('x', Type.AAAA, { address: input }));
    t.same(parseMessage(encodeMessage(m).bytes).answers[0].data, { address: want }, input);
  }
});

t.test('encode errors are DnsEncodeError with a code', async (t) => {
  const bad: Array<[string, ResourceRecord, string]> = [
    ['label over 63', rr('a'.repeat(64) + '.x', Type.A, { address: '1.2.3.4' }), 'DNS_ERR_LABEL'],
    ['empty label', rr('a..b', Type.A, { address: '1.2.3.4' }), 'DNS_ERR_LABEL'],
    ['name over 255', rr(Array(64).fill('abc').join('.'), Type.A, { address: '1.2.3.4' }), 'DNS_ERR_NAME_TOO_LONG'],
    ['escaped name over 255', rr(Array(64).fill('\\065bc').join('.'), Type.A, { address: '1.2.3.4' }), 'DNS_ERR_NAME_TOO_LONG'],
    ['bad escape', rr('a\\25x', Type.A, { address: '1.2.3.4' }), 'DNS_ERR_NAME_ESCAPE'],
    ['escape over 255', rr('a\\300', Type.A, { address: '1.2.3.4' }), 'DNS_ERR_NAME_ESCAPE'],
    ['non-latin1 name', rr('名前.example', Type.A, { address: '1.2.3.4' }), 'DNS_ERR_LABEL'],
    ['bad IPv4', rr('x', Type.A, { address: '1.2.3' }), 'DNS_ERR_ADDRESS'],
    ['IPv4 part over 255', rr('x', Type.A, { address: '1.2.3.256' }), 'DNS_ERR_ADDRESS'],
    ['IPv4 leading zero', rr('x', Type.A, { address: '01.2.3.4' }), 'DNS_ERR_ADDRESS'],
    ['bad IPv6', rr('x', Type.AAAA, { address: '2001:db8::1::2' }), 'DNS_ERR_ADDRESS'],
    ['IPv6 nine groups', rr('x', Type.AAAA, { address: '1:2:3:4:5:6:7:8:9' }), 'DNS_ERR_ADDRESS'],
    ['IPv6 given IPv4', rr('x', Type.AAAA, { address: '10.0.0.1' }), 'DNS_ERR_ADDRESS'],
    ['TXT string over 255', rr('x', Type.TXT, { texts: ['é'.repeat(128)] }), 'DNS_ERR_TXT'],
    ['unknown type without raw', rr('x', PRIVATE_TYPE, { target: 'y' }), 'DNS_ERR_RDATA'],
  ];
  for (const [what, record, code] of bad) {
    const m = emptyMessage();
    m.answers.push(record);
    t.throws(() => encodeMessage(m), { name: 'DnsEncodeError', code }, what);
  }
  const r = emptyMessage();
  r.rcode = Rcode.BADVERS;
  t.throws(() => encodeMessage(r), new DnsEncodeError('DNS_ERR_RCODE', 'rcode 16 needs an OPT record (edns)'));
});

t.test('extended rcodes split into header and OPT and join again', async (t) => {
  const m = emptyMessage(9);
  m.qr = true;
  m.rcode = Rcode.BADVERS;
  m.edns = { udpSize: 4096, version: 0, do: false, extendedRcode: 0, options: [] };
  const { bytes } = encodeMessage(m);
  t.equal(bytes[3] & 0xf, 0, 'header keeps the low 4 bits');
  t.equal(bytes[12 + 5], 1, 'OPT TTL keeps the upper 8 bits');
  const back = parseMessage(bytes);
  t.equal(back.rcode, Rcode.BADVERS);
  t.equal(back.edns?.extendedRcode, 1);
});

t.test('maxSize: additional records go first, then everything but the question (TC)', async (t) => {
  const m = emptyMessage(1);
  m.qr = true;
  m.questions.push({ name: 'big.example', type: Type.A, class: Class.IN });
  for (let i = 0; i < 10; i++) m.answers.push(rr('big.example', Type.A, { address: `10.0.0.${i}` }));
  m.authorities.push(rr('example', Type.NS, { target: 'ns.example' }));
  for (let i = 0; i < 10; i++) m.additionals.push(rr(`host${i}.example`, Type.A, { address: `10.1.0.${i}` }));
  m.edns = { udpSize: 4096, version: 0, do: false, extendedRcode: 0, options: [] };
  const full = encodeMessage(m);
  t.equal(full.truncated, false);
  t.ok(full.answerEnd < full.authorityEnd && full.authorityEnd < full.bytes.length);

  // Answer + authority fit, additionals do not: they are dropped, OPT stays, no TC.
  const cut = encodeMessage(m, full.authorityEnd + 11);
  t.equal(cut.truncated, false);
  t.equal(cut.bytes.length, full.authorityEnd + 11);
  const cutMsg = parseMessage(cut.bytes);
  t.equal(cutMsg.tc, false);
  t.equal(cutMsg.answers.length, 10);
  t.equal(cutMsg.authorities.length, 1);
  t.equal(cutMsg.additionals.length, 0);
  t.ok(cutMsg.edns);
  // The first bytes are the full encoding's: cutting later at authorityEnd is safe.
  t.same(cut.bytes.subarray(12, full.authorityEnd), full.bytes.subarray(12, full.authorityEnd));

  const tiny = encodeMessage(m, 100);
  t.equal(tiny.truncated, true);
  const tinyMsg = parseMessage(tiny.bytes);
  t.match(tinyMsg, { tc: true, answers: [], authorities: [], additionals: [], questions: [{ name: 'big.example' }] });
  t.ok(tinyMsg.edns, 'OPT kept on a truncated answer');
});

t.test('messages larger than the 14-bit pointer range still encode correctly', async (t) => {
  const m = emptyMessage();
  m.questions.push({ name: 'q.example', type: Type.TXT, class: Class.IN });
  for (let i = 0; i < 120; i++) m.answers.push(rr(`n${i}.example`, Type.TXT, { texts: ['x'.repeat(200)] }));
  m.answers.push(rr('late.n119.example', Type.CNAME, { target: 'n119.example' }));
  const { bytes } = encodeMessage(m);
  t.ok(bytes.length > 0x4000);
  const back = parseMessage(bytes);
  t.equal(back.answers.length, 121);
  t.same(back.answers[120], rr('late.n119.example', Type.CNAME, { target: 'n119.example' }));
});

t.test('inZone: a canonical name at or below a zone, on a label boundary', async (t) => {
  const { inZone } = await import('../../pkg/dns/names.ts');
  t.ok(inZone('', 'any.name'));
  t.ok(inZone('example.org', 'example.org'));
  t.ok(inZone('example.org', 'www.example.org'));
  t.notOk(inZone('example.org', 'notexample.org'), 'not across a label');
  t.notOk(inZone('www.example.org', 'example.org'));
});
