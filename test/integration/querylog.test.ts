// CoreDNS's `log` as a DnsServer reply hook (pkg/querylog): the lines a real server writes for real
// clients (dig, a raw UDP socket), from the handler and from the cache, field by field, and which
// rule of which block logs a reply.

import t from 'tap';
import type { Test } from 'tap';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Answer, Query } from '../../pkg/dns/server.ts';
import { LineBatch } from '../../pkg/querylog/lines.ts';
import { ALL_CLASSES, QueryLog } from '../../pkg/querylog/querylog.ts';
import type { QueryLogBlock } from '../../pkg/querylog/querylog.ts';
import { ReplyClass } from '../../pkg/querylog/classify.ts';
import { compileFormat, COMMON_LOG_FORMAT } from '../../pkg/querylog/format.ts';
import { dig } from '../helpers/dig.ts';
import { udpClient } from '../helpers/clients.ts';
import { query, startServer } from '../helpers/dns-server.ts';
import { eventually } from '../helpers/eventually.ts';

const SOA = { name: 'example.org', type: Type.SOA, class: Class.IN, ttl: 30, data: { mname: 'ns.example.org', rname: 'admin.example.org', serial: 1, refresh: 60, retry: 60, expire: 60, minimum: 30 } };

/** example.org's names: a (an address), nodata (no A: NODATA with the SOA), bare (NOERROR, nothing at all), fail (SERVFAIL); the rest NXDOMAIN. */
function handler(q: Query): Answer {
  const m = { ...emptyMessage(), qr: true, aa: true };
  if (q.qname === 'a.example.org' && q.question.type === Type.A) m.answers.push({ name: q.qname, type: Type.A, class: Class.IN, ttl: 30, data: { address: '192.0.2.1' } });
  else if (q.qname === 'fail.example.org') m.rcode = Rcode.SERVFAIL;
  else if (q.qname === 'bare.example.org') m.rcode = Rcode.NOERROR;
  else if (q.qname === 'nodata.example.org' || q.qname === 'a.example.org') m.authorities.push(SOA);
  else (m.rcode = Rcode.NXDOMAIN), m.authorities.push(SOA);
  return { message: m, cacheable: q.qname === 'a.example.org' };
}

async function logged(t: Test, blocks: QueryLogBlock[]) {
  let text = '';
  const log = new QueryLog(blocks, new LineBatch((s) => (text += s)));
  const { port } = await startServer(t, { handler, onReply: log.onReply });
  return { port, lines: () => text.split('\n').filter((l) => l !== '') };
}

const every = (format = COMMON_LOG_FORMAT): QueryLogBlock[] => [{ zone: '', rules: [{ zone: '', format, classes: ALL_CLASSES }] }];

t.test("the common format: CoreDNS's fields, from the handler and from the cache", async (t) => {
  const { port, lines } = await logged(t, every());
  await dig(port, 'A.Example.org', 'A', ['+bufsize=1232', '+nocookie']);
  await dig(port, 'a.example.org', 'A', ['+tcp', '+dnssec']);
  await dig(port, 'nothing.example.org', 'AAAA', ['+noedns', '+nocookie']);
  const [first, second, third] = await eventually(() => (lines().length === 3 ? lines() : null), 'three lines');
  t.match(first, /^\[INFO\] 127\.0\.0\.1:\d+ - \d+ "A IN a\.example\.org\. udp 42 false 1232" NOERROR qr,aa,rd 58 \d+(\.\d+)?s$/, 'name lowercased, with its dot; sizes as sent and received');
  t.match(second, /^\[INFO\] 127\.0\.0\.1:\d+ - \d+ "A IN a\.example\.org\. tcp \d+ true 65535" NOERROR qr,aa,rd \d+ [\d.]+s$/, 'a cache hit is logged; over TCP the buffer is 65535; DO as asked');
  t.match(third, /^\[INFO\] 127\.0\.0\.1:\d+ - \d+ "AAAA IN nothing\.example\.org\. udp 37 false 512" NXDOMAIN qr,aa,rd \d+ [\d.]+s$/, 'no EDNS: 512');
});

t.test('the ID, the request size and a reply without a question', async (t) => {
  const { port, lines } = await logged(t, every('{>id} {size} {name} {type} {class} {rcode} {>opcode} {>bufsize} {/log/class} {nothing} A } {remote}'));
  const client = await udpClient(t);
  const q = query('bare.example.org', Type.TXT, 4242, (m) => (m.edns = { udpSize: 100, extendedRcode: 0, version: 0, do: false, options: [] }));
  client.send(q, port);
  await client.next();
  // Two questions: FORMERR before any question is read.
  client.send(query('bare.example.org', Type.A, 7, (m) => m.questions.push({ name: 'x', type: Type.A, class: Class.IN })), port);
  await client.next();
  const got = await eventually(() => (lines().length === 2 ? lines() : null), 'two lines');
  t.equal(got[0], `[INFO] 4242 ${q.length} bare.example.org. TXT IN NOERROR 0 512 - {nothing} A } 127.0.0.1`, "each field; a buffer under 512 counts as 512; metadata `-`; what names no placeholder as written");
  t.equal(got[1], `[INFO] 7 ${query('bare.example.org', Type.A, 7, (m) => m.questions.push({ name: 'x', type: Type.A, class: Class.IN })).length} - - - FORMERR 0 512 - {nothing} A } 127.0.0.1`, 'no question read: `-`');
});

t.test('classes: success, denial (NXDOMAIN, NODATA), error', async (t) => {
  const only = (classes: number) => [{ zone: '', rules: [{ zone: '', format: '{name} {rcode}', classes }] }];
  const cases: [string, number, string[]][] = [
    ['success', ReplyClass.success, ['a.example.org. NOERROR', 'bare.example.org. NOERROR']],
    ['denial', ReplyClass.denial, ['nodata.example.org. NOERROR', 'nothing.example.org. NXDOMAIN']],
    ['error', ReplyClass.error, ['fail.example.org. SERVFAIL']],
    ['denial and error', ReplyClass.denial | ReplyClass.error, ['nodata.example.org. NOERROR', 'nothing.example.org. NXDOMAIN', 'fail.example.org. SERVFAIL']],
  ];
  for (const [name, classes, want] of cases) {
    const { port, lines } = await logged(t, only(classes));
    for (const n of ['a', 'bare', 'nodata', 'nothing', 'fail']) await dig(port, `${n}.example.org`, 'A');
    await new Promise((r) => setImmediate(r));
    t.same(lines().map((l) => l.replace('[INFO] ', '')), want, name);
  }
});

t.test("rules: the block of the longest zone, then its first rule that holds the name", async (t) => {
  const rule = (zone: string, format: string, classes = ALL_CLASSES) => ({ zone, format, classes });
  const { port, lines } = await logged(t, [
    { zone: '', rules: [rule('', 'root {name}')] },
    // A first rule for a.example.org that logs only denials: a success there is not logged, and no later rule is tried.
    { zone: 'example.org', rules: [rule('a.example.org', 'first {name}', ReplyClass.denial), rule('example.org', 'second {name}')] },
    { zone: 'quiet.example.org', rules: [] },
  ]);
  for (const n of ['a.example.org', 'nothing.example.org', 'x.quiet.example.org', 'other.test', 'nothing.a.example.org']) await dig(port, n, 'A');
  await new Promise((r) => setImmediate(r));
  t.same(lines().map((l) => l.replace('[INFO] ', '')), ['second nothing.example.org.', 'root other.test.', 'first nothing.a.example.org.']);
});

t.test('formats as CoreDNS reads them', async (t) => {
  t.same(compileFormat('{common}'), compileFormat(COMMON_LOG_FORMAT), '{common}');
  t.same(compileFormat('{combined}').slice(-2), [' "', 14, '"'].slice(-2), '{combined} ends with the opcode');
  t.same(compileFormat('{ {name} }'), ['{ ', 5, ' }'], 'a `}` closes the nearest `{`');
});

t.test('a turn that logs more than the batch holds drops lines and says how many', async (t) => {
  let text = '';
  const batch = new LineBatch((s) => (text += s));
  const line = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < 6; i++) batch.add(line);
  batch.flush();
  t.equal(text.split('\n').filter((l) => l === line).length, 4, 'up to the cap (4 MiB)');
  t.equal(text.split('\n').filter((l) => l.startsWith('[WARNING]')).join(''), '[WARNING] plugin/log: 2 query log lines dropped (more than 4194304 bytes in one turn)');
});
