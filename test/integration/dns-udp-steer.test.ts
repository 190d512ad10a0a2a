// pkg/dns UdpListener.steer against the kernel: one client's flow gets a socket of its own on the
// listener's port; paused, that socket reads nothing (what the client sends waits in its queue, the
// rest is dropped there) while another client's datagrams are read as ever; resumed, what waited is
// read. This leans on dgram's internal handle (udp.ts `reading`): a Node.js that moved it fails here.

import t from 'tap';
import type { Test } from 'tap';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { UdpListener } from '../../pkg/dns/udp.ts';
import { connectedTo } from '../helpers/flood.ts';
import { eventually } from '../helpers/eventually.ts';

async function client(t: Test): Promise<Socket> {
  const s = createSocket('udp4');
  t.teardown(() => s.close());
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

t.test("a steered flow's queue, paused, is not read until resumed; the port's other askers are", async (t) => {
  const seen: number[] = [];
  const udp = new UdpListener('127.0.0.1', { onQuery: (_msg, _address, from) => seen.push(from), onError: (err) => t.fail(String(err)), recvBufferSize: 1 << 20, reusePort: true });
  t.teardown(() => udp.close());
  const port = await udp.bind('127.0.0.1', 0);
  const flood = await client(t);
  const other = await client(t);
  const floodPort = flood.address().port;
  const q = udp.steer('127.0.0.1', floodPort);
  t.ok(q, 'a queue of its own');
  await eventually(() => connectedTo(port, '127.0.0.1') === 1, 'the flow on a socket of its own', 2000);
  const send = (s: Socket, n: number) => Promise.all(Array.from({ length: n }, () => new Promise((r) => s.send(Buffer.alloc(12), port, '127.0.0.1', r))));
  await send(flood, 5);
  await eventually(() => seen.length === 5, 'read while not paused', 2000);
  q!.pause();
  seen.length = 0;
  await send(flood, 5);
  await send(other, 3);
  await eventually(() => seen.length === 3, "the other asker's datagrams read", 2000);
  await new Promise((r) => setTimeout(r, 200));
  t.same(seen, [other.address().port, other.address().port, other.address().port], "paused: none of the flow's read");
  q!.resume();
  await eventually(() => seen.length === 8, 'resumed: what waited in its queue read', 2000);
  t.equal(seen.filter((p) => p === floodPort).length, 5);
  q!.close();
  await eventually(() => connectedTo(port, '127.0.0.1') === 0, 'closed: the flow back on the port', 2000);
});
