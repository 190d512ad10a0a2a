// The probes' DNS client against scripted servers on 127.0.0.1 (real UDP and TCP sockets): what it
// takes as the reply, what it ignores, TC → TCP, and each way an exchange fails.

import t from 'tap';
import { createServer } from 'node:net';
import { Packet } from 'dns2';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { exchange, matchReply } from '../../pkg/sidecar/dns-client.ts';
import { SidecarError } from '../../pkg/sidecar/errors.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import { makeAnswer } from '../helpers/packets.ts';
import { blackhole, truncatingUpstream, udpUpstream } from '../helpers/upstreams.ts';
import { freePort } from '../helpers/ports.ts';

const question = { name: 'www.example.com.', type: Type.A, class: Class.IN };

t.test('a reply with our ID and question; the query is RD, IN, a random ID', async (t) => {
  const seen: Array<{ id: number; rd: number; name: string; type: number; class: number }> = [];
  const u = await udpUpstream(t, (msg, _r, send) => {
    const q = Packet.parse(msg);
    seen.push({ id: q.header.id, rd: q.header.rd, name: q.questions[0].name, type: q.questions[0].type, class: q.questions[0].class });
    send(makeAnswer(msg, { addresses: ['192.0.2.1'] }));
  });
  const results = await Promise.all([1, 2, 3, 4].map(() => exchange(u, question, 2000)));
  for (const r of results) {
    t.equal(r.transport, 'udp');
    t.equal(r.reply.rcode, 0);
    t.same(r.reply.answers.map((a) => a.data), [{ address: '192.0.2.1' }]);
  }
  t.same(seen.map((s) => [s.rd, s.name, s.type, s.class]), Array(4).fill([1, 'www.example.com', 1, 1]));
  t.ok(new Set(seen.map((s) => s.id)).size > 1, 'IDs differ between queries');
});

t.test('replies with another ID or another question are ignored; the right one after them is taken', async (t) => {
  const u = await udpUpstream(t, (msg, _r, send) => {
    const id = msg.readUInt16BE(0);
    send(makeAnswer(msg, { id: id ^ 1, addresses: ['198.51.100.1'] }));
    send(makeAnswer(msg, { name: 'evil.example.com', addresses: ['198.51.100.2'] }));
    send(makeAnswer(msg, { type: Type.AAAA, addresses: ['198.51.100.3'] }));
    send(msg); // our own query echoed (QR=0)
    send(makeAnswer(msg, { addresses: ['192.0.2.1'] }));
  });
  const r = await exchange(u, question, 2000);
  t.same(r.reply.answers.map((a) => a.data), [{ address: '192.0.2.1' }]);
});

t.test('the question\'s case may differ (0x20)', async (t) => {
  const u = await udpUpstream(t, (msg, _r, send) => send(makeAnswer(msg, { name: 'WWW.Example.COM', addresses: ['192.0.2.1'] })));
  t.equal((await exchange(u, question, 2000)).reply.answers.length, 1);
});

t.test('a truncated UDP reply: asked again over TCP on the same port', async (t) => {
  const u = await truncatingUpstream(t, (q) => makeAnswer(q, { addresses: ['192.0.2.7', '192.0.2.8'] }));
  const r = await exchange(u, question, 2000);
  t.equal(r.transport, 'tcp');
  t.same(r.reply.answers.map((a) => a.data), [{ address: '192.0.2.7' }, { address: '192.0.2.8' }]);
});

t.test('failures: timeout, connection refused, an unreadable reply, TCP closed early', async (t) => {
  const silent = await blackhole(t);
  await t.rejects(exchange(silent, question, 200), new SidecarError('SIDECAR_TIMEOUT', `udp 127.0.0.1:${silent.port}: no reply within 200 ms`));

  const closed = await freePort();
  await t.rejects(exchange({ host: '127.0.0.1', port: closed }, question, 2000), new SidecarError('SIDECAR_NETWORK', `udp 127.0.0.1:${closed}: connection refused`));

  const garbled = await udpUpstream(t, (msg, _r, send) => {
    const bad = Buffer.from(makeAnswer(msg, { addresses: ['192.0.2.1'] }));
    send(bad.subarray(0, bad.length - 2)); // the A record's RDATA cut short
  });
  const err = await exchange(garbled, question, 2000).catch((e: unknown) => e);
  t.type(err, SidecarError);
  t.equal((err as SidecarError).code, 'SIDECAR_BAD_REPLY');
  t.match((err as SidecarError).message, /^unreadable reply: /);

  // TC over UDP, and TCP accepts and closes without a reply.
  const port = await freePort();
  await udpUpstream(t, (msg, _r, send) => send(makeAnswer(msg, { tc: true })), port);
  const rude = createServer((c) => c.resume().end()); // reads the query (so the socket can close) and hangs up
  await new Promise<void>((r) => rude.listen(port, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => rude.close(() => r())));
  await t.rejects(exchange({ host: '127.0.0.1', port }, question, 2000), new SidecarError('SIDECAR_NETWORK', `tcp 127.0.0.1:${port}: connection closed before the reply`));
});

t.test('matchReply: what is ours', async (t) => {
  const q = emptyMessage(0x1234);
  q.questions.push({ name: 'a.b', type: Type.A, class: Class.IN });
  const header = (id: number, flags: number) => Uint8Array.from([id >> 8, id & 0xff, flags, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  t.equal(matchReply(new Uint8Array(5), q), null, 'short');
  t.equal(matchReply(header(0x1234, 0x00), q), null, 'a query');
  t.equal(matchReply(header(0x1235, 0x80), q), null, 'another ID');
  const noQuestion = matchReply(header(0x1234, 0x80), q);
  t.ok(noQuestion !== null && !(noQuestion instanceof SidecarError), 'our ID and no question: an error reply some servers send');
});
