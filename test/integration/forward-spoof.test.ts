// Anti-spoofing: only a reply from the server's address and port, with our ID, QR=1 and the same
// question is taken; everything else is counted and ignored while the real answer is awaited.
import { createSocket } from 'node:dgram';
import t from 'tap';
import { Forwarder } from '../../pkg/forward/forward.ts';
import { makeAnswer, makeQuery, readAnswer, TYPE_A } from '../helpers/packets.ts';
import { udpUpstream } from '../helpers/upstreams.ts';

const GENUINE = '192.0.2.1';
const FORGED = '203.0.113.66';

t.test('forged replies before the genuine one are ignored and counted', async (t) => {
  const up = await udpUpstream(t, (msg, _rinfo, send) => {
    const id = msg.readUInt16BE(0);
    send(makeAnswer(msg, { addresses: [FORGED], id: (id + 1) & 0xffff })); // wrong ID
    send(makeAnswer(msg, { addresses: [FORGED], name: 'www.evil.example' })); // other name
    send(makeAnswer(msg, { addresses: [FORGED], type: 28 })); // other type (AAAA)
    send(makeAnswer(msg, { addresses: [FORGED], qr: false })); // not a response
    send(Buffer.from([msg[0], msg[1], 0x81])); // too short to hold a question
    send(makeAnswer(msg, { addresses: [GENUINE] }));
  });
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());
  f.setUpstreams([up]);
  const reply = readAnswer(await f.forward(makeQuery('www.example.com', 42), 'www.example.com'));
  t.same(reply.addresses, [GENUINE]);
  t.equal(reply.id, 42);
  t.equal(f.stats.mismatched, 5);
});

t.test('a reply with the right ID and question from another port is ignored', async (t) => {
  // The socket is connected to the server: the kernel drops the forgery before we see it.
  const spoofer = createSocket('udp4');
  await new Promise<void>((resolve) => spoofer.bind(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => spoofer.close(() => resolve())));

  const up = await udpUpstream(t, (msg, rinfo, send) => {
    spoofer.send(makeAnswer(msg, { addresses: [FORGED] }), rinfo.port, rinfo.address, () => {
      send(makeAnswer(msg, { addresses: [GENUINE] }));
    });
  });
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());
  f.setUpstreams([up]);
  const reply = readAnswer(await f.forward(makeQuery('www.example.com', 43), 'www.example.com'));
  t.same(reply.addresses, [GENUINE]);
  t.equal(f.stats.mismatched, 0, 'never delivered to us');
});

t.test('only forgeries: the query times out rather than take one', async (t) => {
  const up = await udpUpstream(t, (msg, _rinfo, send) => {
    send(makeAnswer(msg, { addresses: [FORGED], id: msg.readUInt16BE(0) ^ 0x8000 }));
  });
  const f = new Forwarder({ timeoutMs: 200 });
  t.teardown(() => f.close());
  f.setUpstreams([up]);
  await t.rejects(f.forward(makeQuery('www.example.com', 44), 'www.example.com'), { code: 'FORWARD_ALL_FAILED' });
  t.equal(f.stats.mismatched, 1);
  t.equal(f.stats.timeouts, 1);
});

t.test('the question name is compared without regard to case (0x20 echo)', async (t) => {
  const up = await udpUpstream(t, (msg, _rinfo, send) => {
    send(makeAnswer(msg, { addresses: [GENUINE], name: 'WWW.EXAMPLE.COM' }));
  });
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());
  f.setUpstreams([up]);
  const reply = readAnswer(await f.forward(makeQuery('wWw.ExAmPlE.cOm', 45, TYPE_A), 'www.example.com'));
  t.same(reply.addresses, [GENUINE]);
  t.equal(f.stats.mismatched, 0);
});

t.test('a late reply (after the timeout moved on) is not taken for the next query', async (t) => {
  const held: (() => void)[] = [];
  const slow = await udpUpstream(t, (msg, _rinfo, send) => {
    held.push(() => send(makeAnswer(msg, { addresses: [FORGED] })));
  });
  const fast = await udpUpstream(t, (msg, _rinfo, send) => {
    for (const release of held.splice(0)) release(); // the slow server's reply arrives now
    setTimeout(() => send(makeAnswer(msg, { addresses: [GENUINE] })), 20);
  });
  const f = new Forwarder({ timeoutMs: 200 });
  t.teardown(() => f.close());
  f.setUpstreams([slow, fast]);
  const reply = readAnswer(await f.forward(makeQuery('www.example.com', 46), 'www.example.com'));
  t.same(reply.addresses, [GENUINE]);
  t.equal(f.stats.mismatched, 1);
});
