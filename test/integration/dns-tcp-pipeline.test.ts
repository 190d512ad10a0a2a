// A TCP client pipelining thousands of queries that are answered at once (cache hits, or over its
// fair share: REFUSED): every one answered, in one connection, however many arrive in one read.

import t from 'tap';
import { once } from 'node:events';
import { connect } from 'node:net';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Answer, Query } from '../../pkg/dns/server.ts';
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
