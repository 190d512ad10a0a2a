import t from 'tap';
import { performance } from 'node:perf_hooks';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { encodeMessage, parseMessage } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message, ResourceRecord } from '../../pkg/dns/message.ts';
import type { Answer, Query } from '../../pkg/dns/server.ts';
import { answers, dig } from '../helpers/dig.ts';
import type { DigRecord } from '../helpers/dig.ts';
import { tcpClient, udpClient } from '../helpers/clients.ts';
import { query, startServer } from '../helpers/dns-server.ts';
import { eventually } from '../helpers/eventually.ts';
import { frame } from '../helpers/tcp-frames.ts';

function a(name: string, address: string): ResourceRecord {
  return { name, type: Type.A, class: Class.IN, ttl: 30, data: { address } };
}
/** An A record as dig prints it. */
const digA = (name: string, address: string): DigRecord => ({ name: `${name}.`, ttl: 30, class: 'IN', type: 'A', data: address });

function reply(q: Query, fill: (m: Message) => void, cacheable = true): Answer {
  const m = emptyMessage();
  m.aa = true;
  fill(m);
  return { message: m, cacheable };
}

/** A small zone, and hooks the tests use to hold or change answers. */
function zone() {
  let version = 1;
  const held: Array<() => void> = [];
  const handler = (q: Query): Answer | null | Promise<Answer | null> => {
    switch (q.qname) {
      case 'kubernetes.default.svc.cluster.local':
        return reply(q, (m) => m.answers.push(a(q.qname, '10.96.0.1')));
      case 'big.test':
        return reply(q, (m) => {
          for (let i = 0; i < 60; i++) m.answers.push(a(q.qname, `10.1.0.${i}`));
        });
      case 'glue.test':
        return reply(q, (m) => {
          m.answers.push(a(q.qname, '10.2.0.1'));
          for (let i = 0; i < 30; i++) m.additionals.push(a(`host${i}.glue.test`, `10.2.1.${i}`));
        });
      case 'version.test':
        return reply(q, (m) => m.answers.push(a(q.qname, `10.3.0.${version}`)));
      case 'wire.test': {
        const m = emptyMessage(0x4444);
        m.qr = true;
        m.ra = true;
        m.questions.push({ name: 'wire.test', type: q.question.type, class: Class.IN });
        m.answers.push(a('wire.test', '10.4.0.1'));
        return { wire: encodeMessage(m).bytes, cacheable: true };
      }
      case 'throw.test':
        throw new Error('handler bug');
      case 'reject.test':
        return Promise.reject(new Error('upstream down'));
      case 'null.test':
        return null;
      case 'held.test':
        return new Promise((resolve) => held.push(() => resolve(reply(q, (m) => m.answers.push(a(q.qname, '10.5.0.1')), false))));
      case 'slow-version.test': {
        const v = version;
        return new Promise((resolve) => held.push(() => resolve(reply(q, (m) => m.answers.push(a(q.qname, `10.6.0.${v}`))))));
      }
      case 'badvers.test':
        return reply(q, (m) => (m.rcode = Rcode.BADVERS), false);
      default:
        return reply(q, (m) => (m.rcode = Rcode.NXDOMAIN), false);
    }
  };
  return {
    handler,
    bump: () => version++,
    release: () => held.splice(0).forEach((f) => f()),
    heldCount: () => held.length,
  };
}

t.test('UDP: the asker\'s 0x20 case is echoed, from the handler and from the answer cache', async (t) => {
  const { server, port } = await startServer(t, { handler: zone().handler });
  const name = 'KuBeRnEtEs.DeFaUlT.svc.cluster.local';
  const first = await dig(port, name);
  t.equal(first.status, 'NOERROR');
  t.same(first.answer, [digA(name, '10.96.0.1')]);
  const other = 'kUbErNeTeS.dEfAuLt.SVC.cluster.local';
  const again = await dig(port, other);
  t.equal(again.question, `${other}.`, 'question echoed');
  t.same(again.answer, [digA(other, '10.96.0.1')]);
  t.equal(server.stats.cacheMisses, 1);
  t.equal(server.stats.cacheHits, 1);
  t.equal(server.stats.queries, 2);
});

t.test('TCP answers from the same cache, case echoed too', async (t) => {
  const { server, port } = await startServer(t, { handler: zone().handler });
  await dig(port, 'kubernetes.default.svc.cluster.local');
  const out = await dig(port, 'KUBERNETES.default.svc.cluster.local', 'A', ['+tcp']);
  t.match(out.raw, '(TCP)');
  t.same(out.answer, [digA('KUBERNETES.default.svc.cluster.local', '10.96.0.1')]);
  t.equal(server.stats.cacheHits, 1);
});

t.test('EDNS: OPT echoed with our size and the DO bit; none without EDNS', async (t) => {
  const { port } = await startServer(t, { handler: zone().handler });
  const name = 'kubernetes.default.svc.cluster.local';
  t.same((await dig(port, name, 'A', ['+bufsize=1232'])).edns, { version: 0, flags: [], udp: 4096 });
  t.same((await dig(port, name, 'A', ['+dnssec'])).edns, { version: 0, flags: ['do'], udp: 4096 });
  t.equal((await dig(port, name, 'A', ['+noedns'])).edns, null);
  const badvers = await dig(port, name, 'A', ['+edns=1', '+noednsnegotiation']);
  t.equal(badvers.status, 'BADVERS');
  t.equal(badvers.edns?.version, 0);
});

t.test('a big answer: as many whole records as fit with TC over UDP, dig retries over TCP and gets all 60', async (t) => {
  const { server, port } = await startServer(t, { handler: zone().handler });
  // 512 bytes without EDNS: header + question (26) + 30 A records of 16 bytes (a pointer for the name).
  const tc = await dig(port, 'big.test', 'A', ['+noedns', '+ignore']);
  t.ok(tc.flags.includes('tc'));
  t.equal(tc.answer.length, 30, 'a client without TCP still gets addresses');
  t.same(tc.answer.map((a) => a.data), Array.from({ length: 30 }, (_, i) => `10.1.0.${i}`), 'the first ones, in order');
  t.equal(server.stats.truncated, 1);
  // A 600-byte EDNS buffer: what is left after header, question and OPT, in whole records.
  const partial = await dig(port, 'big.test', 'A', ['+bufsize=600', '+ignore']);
  t.ok(partial.flags.includes('tc'));
  t.equal(partial.answer.length, Math.floor((600 - 26 - 11) / 16), 'EDNS size honoured, OPT counted');
  const retried = await dig(port, 'big.test', 'A', ['+noedns']);
  t.match(retried.raw, 'Truncated, retrying in TCP mode');
  t.equal(retried.answer.length, 60);
  // A 4096-byte EDNS buffer takes the whole answer over UDP (60 x 16 bytes + header, question, OPT).
  const edns = await dig(port, 'big.test', 'A', ['+bufsize=4096']);
  t.notMatch(edns.raw, 'Truncated');
  t.equal(edns.answer.length, 60);
  t.equal(server.stats.cacheMisses, 1, 'one encoding served all the sizes');
  t.equal(server.stats.truncated, 3, 'the two above and the retried query\'s UDP try');
});

t.test('too much glue: the additional section is cut, no TC', async (t) => {
  const { server, port } = await startServer(t, { handler: zone().handler });
  const small = await dig(port, 'glue.test', 'A', ['+noedns']);
  t.equal(small.status, 'NOERROR');
  t.notOk(small.flags.includes('tc'));
  t.equal(small.answer.length, 1);
  t.same(small.additional, []);
  const large = await dig(port, 'glue.test', 'A', ['+bufsize=1232']);
  t.equal(large.additional.length, 30);
  t.equal(server.stats.truncated, 0);
});

t.test('errors: NOTIMP, FORMERR, SERVFAIL from a throwing or rejecting handler', async (t) => {
  const errors: unknown[] = [];
  const { server, port } = await startServer(t, { handler: zone().handler, observer: { handlerError: (e) => errors.push(e) } });
  t.equal((await dig(port, 'throw.test')).status, 'SERVFAIL');
  t.equal((await dig(port, 'reject.test', 'A', ['+tcp'])).status, 'SERVFAIL');
  t.same(errors.map((e) => (e as Error).message), ['handler bug', 'upstream down']);
  t.equal((await dig(port, 'badvers.test', 'A', ['+noedns'])).status, 'SERVFAIL', 'an extended rcode needs the asker\'s OPT');

  const client = await udpClient(t);
  client.send(query('status.test', Type.A, 1, (m) => (m.opcode = 2)), port);
  t.match(parseMessage(await client.next()), { id: 1, qr: true, rcode: Rcode.NOTIMP, opcode: 2, questions: [{ name: 'status.test' }] });
  client.send(query('two.test', Type.A, 2, (m) => m.questions.push({ name: 'x', type: 1, class: 1 })), port);
  t.match(parseMessage(await client.next()), { id: 2, rcode: Rcode.FORMERR, questions: [] });
  client.send(query('ans.test', Type.A, 3, (m) => m.answers.push(a('ans.test', '1.1.1.1'))), port);
  t.match(parseMessage(await client.next()), { id: 3, rcode: Rcode.FORMERR });
  t.equal(server.stats.malformed, 2);
});

t.test('a null answer is dropped silently (the next query still answers)', async (t) => {
  const dropped: string[] = [];
  const { server, port } = await startServer(t, { handler: zone().handler, observer: { dropped: (r) => dropped.push(r) } });
  const client = await udpClient(t);
  client.send(query('null.test', Type.A, 10), port);
  client.send(query('kubernetes.default.svc.cluster.local', Type.A, 11), port);
  t.equal(parseMessage(await client.next()).id, 11);
  t.same(dropped, ['handler']);
  // A response packet (QR=1) is dropped too.
  client.send(query('x.test', Type.A, 12, (m) => (m.qr = true)), port);
  client.send(query('kubernetes.default.svc.cluster.local', Type.A, 13), port);
  t.equal(parseMessage(await client.next()).id, 13);
  t.same(dropped, ['handler', 'response-packet']);
  t.equal(server.stats.dropped, 2);
  t.same(client.received, []);
});

t.test('a relayed wire answer gets the asker\'s ID and case, and is cached', async (t) => {
  const { server, port } = await startServer(t, { handler: zone().handler });
  const client = await udpClient(t);
  for (const [id, name] of [[21, 'WIRE.test'], [22, 'wire.TEST']] as const) {
    client.send(query(name, Type.A, id), port);
    const m = parseMessage(await client.next());
    t.match(m, { id, ra: true, questions: [{ name }], answers: [{ name, data: { address: '10.4.0.1' } }] });
  }
  t.equal(server.stats.cacheHits, 1);
});

t.test('invalidate() forgets pre-encoded answers', async (t) => {
  const z = zone();
  const { server, port } = await startServer(t, { handler: z.handler });
  t.same(answers(await dig(port, 'version.test')), ['10.3.0.1']);
  z.bump();
  t.same(answers(await dig(port, 'version.test')), ['10.3.0.1'], 'still the stored answer');
  server.invalidate();
  t.same(answers(await dig(port, 'version.test')), ['10.3.0.2']);
});

t.test('an answer computed before invalidate() is sent but not stored', async (t) => {
  const z = zone();
  const { server, port } = await startServer(t, { handler: z.handler });
  const client = await udpClient(t);
  client.send(query('slow-version.test', Type.A, 1), port);
  await eventually(() => z.heldCount() === 1, 'the handler holds the query');
  z.bump();
  server.invalidate();
  z.release();
  t.match(parseMessage(await client.next()), { id: 1, answers: [{ data: { address: '10.6.0.1' } }] });
  const next = dig(port, 'slow-version.test');
  await eventually(() => z.heldCount() === 1, 'the second query reached the handler (a miss)');
  z.release();
  t.same(answers(await next), ['10.6.0.2']);
  t.equal(server.stats.cacheHits, 0);
});

t.test('TCP: three pipelined queries on one connection, answered as they complete', async (t) => {
  const z = zone();
  const { port } = await startServer(t, { handler: z.handler });
  const c = await tcpClient(t, port);
  c.socket.write(Buffer.concat([
    frame(query('held.test', Type.A, 101)),
    frame(query('kubernetes.default.svc.cluster.local', Type.A, 102)),
    frame(query('big.test', Type.A, 103)),
  ]));
  const early = [parseMessage(await c.next()), parseMessage(await c.next())];
  t.same(early.map((m) => m.id).sort(), [102, 103], 'the held query does not block the others');
  t.equal(early.find((m) => m.id === 103)?.answers.length, 60, 'TCP carries the whole big answer');
  t.equal(z.heldCount(), 1);
  z.release();
  t.match(parseMessage(await c.next()), { id: 101, answers: [{ data: { address: '10.5.0.1' } }] });
});

t.test('TCP: a zero-length frame closes the connection after the answers owed', async (t) => {
  const malformed: string[] = [];
  const { port } = await startServer(t, { handler: zone().handler, observer: { malformed: (r) => malformed.push(r) } });
  const c = await tcpClient(t, port);
  c.socket.write(Buffer.concat([frame(query('kubernetes.default.svc.cluster.local', Type.A, 7)), Buffer.from([0, 0])]));
  t.equal(parseMessage(await c.next()).id, 7);
  await c.closed;
  t.same(malformed, ['tcp-frame-length']);
});

t.test('TCP: an idle connection is closed, counted as idle', async (t) => {
  const closed: string[] = [];
  const { server, port } = await startServer(t, { handler: zone().handler, tcpIdleTimeoutMs: 100, observer: { tcpClosed: (r) => closed.push(r) } });
  const c = await tcpClient(t, port);
  c.socket.write(frame(query('kubernetes.default.svc.cluster.local', Type.A, 1)));
  await c.next();
  await c.closed;
  t.pass('closed by the server after going idle');
  await eventually(() => server.stats.tcpConnections === 0, 'the server counts the connection closed');
  t.same(closed, ['idle']);
  t.same(server.stats.tcpClosed, { idle: 1, stalled: 0, evicted: 0 });
});

t.test('TCP: a frame left unfinished is closed at its deadline, however slowly its bytes trickle in', async (t) => {
  const { server, port } = await startServer(t, { handler: zone().handler, tcpFrameTimeoutMs: 300 });
  const whole = frame(query('kubernetes.default.svc.cluster.local', Type.A, 9));
  // Half a frame, then a byte every 100 ms: activity, but never a whole query.
  const slow = await tcpClient(t, port);
  slow.socket.write(whole.subarray(0, 10));
  const started = performance.now();
  const drip = setInterval(() => slow.socket.write(Buffer.from([0])), 100);
  t.teardown(() => clearInterval(drip));
  // A length prefix promising 65,535 bytes, then nothing.
  const promised = await tcpClient(t, port);
  promised.socket.write(Buffer.from([0xff, 0xff, 1, 2]));
  await Promise.all([slow.closed, promised.closed]);
  clearInterval(drip);
  t.ok(performance.now() - started < 1500, 'closed at the frame deadline, not the 10 s idle timeout');
  t.same(server.stats.tcpClosed, { idle: 0, stalled: 2, evicted: 0 });
  // A client that sends its query in pieces within the deadline is answered.
  const pieces = await tcpClient(t, port);
  pieces.socket.write(whole.subarray(0, 5));
  await new Promise((r) => setTimeout(r, 100));
  pieces.socket.write(whole.subarray(5));
  t.equal(parseMessage(await pieces.next()).id, 9);
});

t.test('TCP: at the cap a newcomer takes the place of the connection with the oldest progress that owes nothing', async (t) => {
  const dropped: string[] = [];
  const closed: string[] = [];
  const z = zone();
  const { server, port } = await startServer(t, { handler: z.handler, maxTcpConnections: 2, observer: { dropped: (r) => dropped.push(r), tcpClosed: (r) => closed.push(r) } });
  const open = [await tcpClient(t, port), await tcpClient(t, port)];
  for (const [i, c] of open.entries()) {
    c.socket.write(frame(query('kubernetes.default.svc.cluster.local', Type.A, i)));
    await c.next();
  }
  // open[1] asks again: open[0] now has the oldest progress.
  open[1].socket.write(frame(query('kubernetes.default.svc.cluster.local', Type.A, 5)));
  await open[1].next();
  t.equal(server.stats.tcpConnections, 2);
  const third = await tcpClient(t, port);
  third.socket.write(frame(query('kubernetes.default.svc.cluster.local', Type.A, 3)));
  t.equal(parseMessage(await third.next()).id, 3, 'the newcomer is answered');
  await open[0].closed;
  t.same(closed, ['evicted']);
  t.same(dropped, []);
  t.equal(open[1].socket.destroyed, false, 'the more recent one stays');

  // Connections that owe answers are never closed for a newcomer: then the newcomer is turned away.
  open[1].socket.write(frame(query('held.test', Type.A, 6)));
  third.socket.write(frame(query('held.test', Type.A, 7)));
  await eventually(() => z.heldCount() === 2, 'both queries held by the handler');
  const fourth = await tcpClient(t, port);
  await fourth.closed;
  t.same(dropped, ['tcp-cap']);
  z.release();
  t.equal(parseMessage(await open[1].next()).id, 6);
  t.equal(parseMessage(await third.next()).id, 7);
});

t.test('close() lets a query in flight finish', async (t) => {
  const z = zone();
  const { server, port } = await startServer(t, { handler: z.handler });
  const client = await udpClient(t);
  client.send(query('held.test', Type.A, 55), port);
  await eventually(() => z.heldCount() === 1, 'the handler holds the query');
  const closed = server.close(10_000);
  z.release();
  t.match(parseMessage(await client.next()), { id: 55, answers: [{ data: { address: '10.5.0.1' } }] });
  await closed;
  await t.rejects(dig(port, 'kubernetes.default.svc.cluster.local'), 'nothing answers after close');
});

t.test('the observer sees every response with its qtype, rcode and transport', async (t) => {
  const seen: string[] = [];
  const { port } = await startServer(t, {
    handler: zone().handler,
    observer: { response: (qtype, rcode, transport, seconds, fromCache) => seen.push(`${qtype}/${rcode}/${transport}/${fromCache}/${seconds >= 0}`) },
  });
  await dig(port, 'kubernetes.default.svc.cluster.local');
  await dig(port, 'kubernetes.default.svc.cluster.local', 'A', ['+tcp']);
  await dig(port, 'missing.test', 'AAAA');
  t.same(seen, ['1/0/udp/false/true', '1/0/tcp/true/true', '28/3/udp/false/true']);
});
