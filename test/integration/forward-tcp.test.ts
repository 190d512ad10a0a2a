// TC=1 over UDP → the same server again over TCP.
import t from 'tap';
import { Forwarder } from '../../pkg/forward/forward.ts';
import { makeAnswer, makeQuery, readAnswer } from '../helpers/packets.ts';
import { answering, truncatingUpstream } from '../helpers/upstreams.ts';

const many = Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`);

t.test('a truncated reply is retried over TCP and the TCP answer returned', async (t) => {
  const tcpIds: number[] = [];
  const up = await truncatingUpstream(t, (q) => {
    tcpIds.push(q.readUInt16BE(0));
    return makeAnswer(q, { addresses: many });
  });
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());
  f.setUpstreams([up]);
  const reply = readAnswer(await f.forward(makeQuery('big.example.com', 0xbeef), 'big.example.com'));
  t.equal(reply.id, 0xbeef);
  t.equal(reply.tc, false);
  t.same(reply.addresses, many);
  t.equal(f.stats.tcpRetries, 1);
  t.equal(up.ids.length, 1);
  t.equal(tcpIds.length, 1);
});

t.test('a TCP reply that does not match the query is not taken', async (t) => {
  const up = await truncatingUpstream(t, (q) => makeAnswer(q, { addresses: many, name: 'other.example.com' }));
  const next = await answering(t, { addresses: ['192.0.2.77'] });
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());
  f.setUpstreams([up, next]);
  const reply = readAnswer(await f.forward(makeQuery('big.example.com', 3), 'big.example.com'));
  t.same(reply.addresses, ['192.0.2.77']);
  t.equal(f.stats.mismatched, 1);
});

t.test('TCP unavailable: the next server; if none, the truncated reply itself', async (t) => {
  const noTcp = await truncatingUpstream(t);
  const next = await answering(t, { addresses: ['192.0.2.88'] });
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());

  f.setUpstreams([noTcp, next]);
  t.same(readAnswer(await f.forward(makeQuery('big.example.com', 4), 'big.example.com')).addresses, ['192.0.2.88']);

  f.setUpstreams([noTcp]);
  const reply = readAnswer(await f.forward(makeQuery('big.example.com', 5), 'big.example.com'));
  t.equal(reply.tc, true, 'the client is told to retry over TCP itself');
  t.equal(reply.id, 5);
  t.equal(f.stats.tcpRetries, 2);
  t.equal(f.stats.socketErrors, 2, 'connection refused twice');
});
