import t from 'tap';
import { Rcode, Type } from '../../pkg/dns/constants.ts';
import { parseMessage } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Query } from '../../pkg/dns/server.ts';
import { dig } from '../helpers/dig.ts';
import { tcpClient, udpClient } from '../helpers/clients.ts';
import { startServer } from '../helpers/dns-server.ts';
import { eventually } from '../helpers/eventually.ts';
import { frame } from '../helpers/tcp-frames.ts';

// Hostile input: nothing a client sends may stop the server or throw out of it; every bad
// packet is answered FORMERR when its header can be read, else dropped, and always counted.

function handler(q: Query) {
  const m = emptyMessage();
  m.answers.push({ name: q.qname, type: Type.A, class: 1, ttl: 5, data: { address: '10.0.0.1' } });
  return { message: m, cacheable: true };
}

const HDR = (id: number, qd: number, an = 0, ns = 0, ar = 0) => [id >> 8, id & 0xff, 0x01, 0x00, 0, qd, 0, an, 0, ns, 0, ar];
const Q_TAIL = [0, 1, 0, 1];

// [what, packet, FORMERR expected (else dropped), malformed reason]
const hostile: Array<[string, number[], boolean, string]> = [
  ['empty datagram', [], false, 'short'],
  ['11-byte header', HDR(1, 1).slice(0, 11), false, 'short'],
  ['no question', HDR(2, 0), true, 'qdcount'],
  ['two questions', [...HDR(3, 2), 1, 0x61, 0, ...Q_TAIL, 1, 0x62, 0, ...Q_TAIL], true, 'qdcount'],
  ['an answer in a query', [...HDR(4, 1, 1), 1, 0x61, 0, ...Q_TAIL], true, 'counts'],
  ['two additional records', [...HDR(5, 1, 0, 0, 2), 1, 0x61, 0, ...Q_TAIL], true, 'counts'],
  ['question cut short', [...HDR(6, 1), 5, 0x61, 0x62], true, 'short'],
  ['question without QTYPE', [...HDR(7, 1), 1, 0x61, 0, 0], true, 'short'],
  ['pointer loop in the question', [...HDR(8, 1), 0xc0, 12, ...Q_TAIL], true, 'question-pointer'],
  ['label type 0x40', [...HDR(9, 1), 0x41, 0x61, 0, ...Q_TAIL], true, 'label'],
  ['label type 0x80', [...HDR(10, 1), 0x81, 0x61, 0, ...Q_TAIL], true, 'label'],
  ['name over 255 bytes', [...HDR(11, 1), ...Array(5).fill([63, ...Array(63).fill(0x61)]).flat(), 0, ...Q_TAIL], true, 'name-too-long'],
  ['additional record that is not OPT', [...HDR(12, 1, 0, 0, 1), 1, 0x61, 0, ...Q_TAIL, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4], true, 'not-opt'],
  ['OPT with overlong RDLENGTH', [...HDR(13, 1, 0, 0, 1), 1, 0x61, 0, ...Q_TAIL, 0, 0, 41, 16, 0, 0, 0, 0, 0, 1, 244], true, 'short'],
  ['OPT with a broken option', [...HDR(14, 1, 0, 0, 1), 1, 0x61, 0, ...Q_TAIL, 0, 0, 41, 16, 0, 0, 0, 0, 0, 0, 5, 0, 10, 0, 9, 1], true, 'bad-opt'],
];

t.test('each hostile packet is answered FORMERR or dropped, and counted with its reason', async (t) => {
  const reasons: string[] = [];
  const { server, port } = await startServer(t, { handler, observer: { malformed: (r) => reasons.push(r) } });
  const client = await udpClient(t);
  for (const [what, bytes, formerr, reason] of hostile) {
    const before = server.stats.malformed;
    client.send(Buffer.from(bytes), port);
    if (formerr) {
      const reply = parseMessage(await client.next());
      t.match(reply, { id: (bytes[0] << 8) | bytes[1], qr: true, rcode: Rcode.FORMERR }, what);
    } else {
      await eventually(() => server.stats.malformed > before, what);
    }
    t.equal(reasons.at(-1), reason, `${what}: reason`);
  }
  t.equal(server.stats.malformed, hostile.length);
  t.same(client.received, [], 'no reply for the dropped ones');
});

t.test('a flood of random and hostile packets over UDP and TCP; answers still come', async (t) => {
  const { server, port } = await startServer(t, { handler });
  let seed = 42;
  const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 8) % n;
  const randomBytes = (len: number): Buffer => {
    const b = Buffer.alloc(len);
    for (let i = 0; i < len; i++) b[i] = rand(256);
    return b;
  };

  // UDP: random datagrams, and hostile ones with random ids, in batches so the socket keeps up.
  const client = await udpClient(t);
  const total = 4000;
  for (let i = 0; i < total; i++) {
    const pick = rand(3);
    const bytes = pick === 0 ? randomBytes(rand(600)) : Buffer.from(hostile[rand(hostile.length)][1]);
    if (pick === 2 && bytes.length >= 4) bytes[2] = rand(256); // random flags: QR, opcodes
    client.send(bytes, port);
    if (i % 200 === 199) await new Promise((r) => setImmediate(r));
  }

  // TCP: a 64 KiB frame of garbage, a stream of random frames, a frame cut off mid-way.
  const big = await tcpClient(t, port);
  const garbage = randomBytes(65535);
  garbage[2] = 0x01; // a query header, so it can be answered FORMERR
  big.socket.write(frame(garbage));
  t.match(parseMessage(await big.next()), { rcode: Rcode.FORMERR, id: garbage.readUInt16BE(0) });
  const noisy = await tcpClient(t, port);
  for (let i = 0; i < 200; i++) noisy.socket.write(frame(randomBytes(1 + rand(300))));
  noisy.socket.end();
  await noisy.closed;
  const cut = await tcpClient(t, port);
  cut.socket.end(Buffer.from([0x10, 0x00, 1, 2, 3]));
  await cut.closed;

  // The server is still answering, correctly, on both transports.
  await eventually(() => server.stats.queries > total / 2, 'the flood was read');
  const udp = await dig(port, 'Still.Alive.test');
  t.equal(udp.status, 'NOERROR');
  t.same(udp.answer, [{ name: 'Still.Alive.test.', ttl: 5, class: 'IN', type: 'A', data: '10.0.0.1' }]);
  t.equal((await dig(port, 'still.alive.test', 'A', ['+tcp'])).status, 'NOERROR');
  t.ok(server.stats.malformed > total / 4, `malformed counter moved: ${server.stats.malformed}`);
  t.ok(server.stats.dropped > 0, `dropped counter moved: ${server.stats.dropped}`);
});
