// Forwarder({ forceTcp }): every query over TCP on a few pooled connections (node-cache's force_tcp
// to kube-dns), and a query whose connection ends under it sent again at once on a new one.

import t from 'tap';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { Test } from 'tap';
import { Forwarder } from '../../pkg/forward/forward.ts';
import { frame, readFrames } from '../../pkg/dns/frames.ts';
import { makeAnswer, makeQuery, readAnswer } from '../helpers/packets.ts';
import { freePort } from '../helpers/ports.ts';

interface TcpServer {
  port: number;
  /** Connections accepted so far. */
  connections: Socket[];
}

/**
 * A TCP DNS server on 127.0.0.1; `reply(query, connection index)` answers, or returns 'close' to end
 * the connection at once without answering (the fault a draining or crashing upstream causes to a
 * query already on its way), or 'never' to leave it unanswered.
 */
async function tcpServer(t: Test, reply: (query: Buffer, connection: number) => Buffer | 'close' | 'never'): Promise<TcpServer> {
  const connections: Socket[] = [];
  const server = createServer((conn) => {
    const index = connections.push(conn) - 1;
    conn.on('error', () => {});
    readFrames(conn, (query) => {
      const r = reply(query, index);
      if (r === 'close') conn.destroy();
      else if (r !== 'never') conn.write(frame(r));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const c of connections) c.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port, connections };
}

function forwarder(t: Test, port: number, timeoutMs = 2000): Forwarder {
  const f = new Forwarder({ forceTcp: true, timeoutMs });
  t.teardown(() => f.close());
  f.setUpstreams([{ host: '127.0.0.1', port }]);
  return f;
}

t.test('200 queries at once: all over TCP, answered, on at most 4 connections', async (t) => {
  const up = await tcpServer(t, (q) => makeAnswer(q, { addresses: ['192.0.2.1'] }));
  const f = forwarder(t, up.port);
  const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => f.forward(makeQuery(`n${i}.example.com`, i), `n${i}.example.com`)));
  t.ok(replies.every((r, i) => readAnswer(r).id === i && readAnswer(r).addresses[0] === '192.0.2.1'), 'each answered, with its own ID');
  t.ok(up.connections.length >= 1 && up.connections.length <= 4, `${up.connections.length} connections`);
  const before = up.connections.length;
  await f.forward(makeQuery('later.example.com', 7), 'later.example.com');
  t.equal(up.connections.length, before, 'a later query reuses a connection');
});

t.test('a connection that ends under a query: the query is sent again on a new connection and answered', async (t) => {
  const up = await tcpServer(t, (q, connection) => (connection === 0 ? 'close' : makeAnswer(q, { addresses: ['192.0.2.2'] })));
  const f = forwarder(t, up.port);
  const reply = readAnswer(await f.forward(makeQuery('drained.example.com', 42), 'drained.example.com'));
  t.same([reply.id, reply.addresses], [42, ['192.0.2.2']]);
  t.equal(up.connections.length, 2);
  t.equal(f.stats.resent, 1);
});

t.test('ended twice: given up at once, not after the timeout', async (t) => {
  const up = await tcpServer(t, () => 'close');
  const f = forwarder(t, up.port, 5000);
  const started = Date.now();
  await t.rejects(f.forward(makeQuery('gone.example.com', 1), 'gone.example.com'), { code: 'FORWARD_ALL_FAILED' });
  t.ok(Date.now() - started < 1000, `failed in ${Date.now() - started} ms`);
});

t.test('nothing listening: refused at once', async (t) => {
  const f = forwarder(t, await freePort(), 5000);
  const started = Date.now();
  await t.rejects(f.forward(makeQuery('closed.example.com', 1), 'closed.example.com'), { code: 'FORWARD_ALL_FAILED' });
  t.ok(Date.now() - started < 1000, `failed in ${Date.now() - started} ms`);
  t.ok(f.stats.socketErrors >= 1);
});

t.test('no answer: the try times out, and the connection serves the next query', async (t) => {
  const up = await tcpServer(t, (q) => (q.includes('silent') ? 'never' : makeAnswer(q, { addresses: ['192.0.2.3'] })));
  const f = forwarder(t, up.port, 300);
  await t.rejects(f.forward(makeQuery('silent.example.com', 1), 'silent.example.com'), { code: 'FORWARD_ALL_FAILED' });
  t.equal(f.stats.timeouts, 1);
  t.same(readAnswer(await f.forward(makeQuery('fine.example.com', 2), 'fine.example.com')).addresses, ['192.0.2.3']);
  t.equal(up.connections.length, 1);
});
