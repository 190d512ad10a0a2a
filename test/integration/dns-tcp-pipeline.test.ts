// A TCP client pipelining thousands of queries that are answered at once (cache hits, or over its
// fair share: REFUSED): every one answered, in one connection, however many arrive in one read; and
// taken a few frames a turn, so that other clients' queries are read between.

import t from 'tap';
import type { Test } from 'tap';
import { once } from 'node:events';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Answer, DnsServer, Query } from '../../pkg/dns/server.ts';
import { startServer } from '../helpers/dns-server.ts';
import { eventually } from '../helpers/eventually.ts';
import { makeQuery } from '../helpers/packets.ts';
import { frame, splitFrames } from '../helpers/tcp-frames.ts';

function cached(q: Query): Answer {
  const m = emptyMessage();
  m.answers.push({ name: q.qname, type: Type.A, class: Class.IN, ttl: 60, data: { address: '192.0.2.1' } });
  return { message: m, cacheable: true, ttl: 60 };
}

t.test('20,000 cache hits pipelined on one connection, written at once: every one answered', async (t) => {
  const { port } = await startServer(t, { handler: cached });
  const socket = connect({ host: '127.0.0.1', port });
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  const QUERIES = 20_000;
  const answered = new Set<number>();
  splitFrames(socket, (msg) => answered.add(msg.readUInt16BE(0)));
  socket.write(frame(makeQuery('hit.test', 65_535)));
  await eventually(() => answered.has(65_535), 'the first answered (and cached)', 2000);
  socket.write(Buffer.concat(Array.from({ length: QUERIES }, (_, id) => frame(makeQuery('hit.test', id)))));
  await eventually(() => answered.size === QUERIES + 1, 'every query answered', 10_000).catch(() => undefined);
  t.equal(answered.size - 1, QUERIES, `every hit answered (${answered.size - 1} of ${QUERIES})`);
});

/**
 * `connections` each write a burst of `burst` pipelined misses at once, 50 µs of work each; a UDP
 * query is sent as the first frame is worked. How many frames were worked before it.
 */
async function udpQueryAmidBursts(t: Test, connections: number, burst: number): Promise<number> {
  // The order the handler sees questions in.
  const seen: string[] = [];
  const udp = createSocket('udp4');
  t.teardown(() => udp.close());
  let port = 0;
  const handler = (q: Query): Answer => {
    if (seen.push(q.transport) === 1) udp.send(makeQuery('meanwhile.test', 7), port, '127.0.0.1');
    const until = performance.now() + 0.05;
    while (performance.now() < until);
    return cached(q);
  };
  let server: DnsServer;
  ({ server, port } = await startServer(t, { handler, answerCacheBytes: 0 }));
  const sockets = Array.from({ length: connections }, () => connect({ host: '127.0.0.1', port }));
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  // Every connection accepted first: the bursts are then all there to read in one turn.
  await eventually(() => server.stats.tcpConnections === connections, 'the connections accepted', 2000);
  let answered = 0;
  for (const s of sockets) splitFrames(s, () => answered++);
  const udpAnswered = once(udp, 'message');
  sockets.forEach((s, c) => s.write(Buffer.concat(Array.from({ length: burst }, (_, id) => frame(makeQuery(`b${id}.c${c}.burst.test`, id))))));
  await udpAnswered;
  await eventually(() => answered === connections * burst, 'the bursts answered', 5000);
  return seen.indexOf('udp');
}

t.test('a burst pipelined on one connection is taken a few frames a turn: a UDP query that comes meanwhile is not answered after all of it', async (t) => {
  // Taken in one go, the burst holds the thread ~25 ms.
  const at = await udpQueryAmidBursts(t, 1, 500);
  t.ok(at > 0 && at < 500 / 4, `the UDP query worked after ${at} of the burst's 500 frames`);
});

t.test("bursts on many connections share a turn's frames: a UDP query that comes meanwhile waits for a few, not a few from each", async (t) => {
  // A flood over 10 connections: 32 frames a turn from each held the UDP query behind 320 or more.
  const at = await udpQueryAmidBursts(t, 10, 100);
  t.ok(at > 0 && at < 1000 / 8, `the UDP query worked after ${at} of the bursts' 1,000 frames`);
});
