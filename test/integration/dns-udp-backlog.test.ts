// pkg/dns udpBacklog against the kernel: a UDP socket whose reader is stalled (a worker thread bound
// it, then blocks) queues what is sent to it, /proc/net/udp says how many bytes; sent more than its
// small buffer holds, the kernel drops the rest and says how many.

import t from 'tap';
import type { Test } from 'tap';
import { createSocket } from 'node:dgram';
import { Worker } from 'node:worker_threads';
import { udpBacklog } from '../../pkg/dns/udp-backlog.ts';

/** A socket on 127.0.0.1 with a 64 KiB receive buffer, its thread blocked for `ms`: resolves with its port. */
function stalledSocket(t: Test, ms: number): Promise<number> {
  const code = `
    const { parentPort } = require('node:worker_threads');
    const s = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 65536 });
    s.bind(0, '127.0.0.1', () => {
      parentPort.postMessage(s.address().port);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
      s.close();
    });`;
  const w = new Worker(code, { eval: true });
  t.teardown(() => w.terminate());
  return new Promise((resolve) => w.once('message', resolve));
}

t.test('a stalled reader: queued bytes, then drops once its buffer is full', async (t) => {
  const port = await stalledSocket(t, 3000);
  t.same(udpBacklog(port), { queued: 0, drops: 0 }, 'nothing sent yet');
  const s = createSocket('udp4');
  t.teardown(() => s.close());
  const payload = Buffer.alloc(100);
  const send = (n: number) => Promise.all(Array.from({ length: n }, () => new Promise((r) => s.send(payload, port, '127.0.0.1', r))));
  await send(10);
  const some = udpBacklog(port)!;
  t.ok(some.queued >= 1000 && some.drops === 0, `ten datagrams queued (${some.queued} bytes, as the kernel counts them)`);
  await send(2000);
  const full = udpBacklog(port)!;
  t.ok(full.drops > 0, `past its buffer: ${full.drops} dropped`);
  t.equal(udpBacklog(1), null, 'a port nobody holds: nothing known');
});

t.test("a socket connected to one flow (a steered flood's own queue) is not the port's queue: its drops are not counted", async (t) => {
  const main = createSocket({ type: 'udp4', reusePort: true });
  t.teardown(() => main.close());
  await new Promise<void>((r) => main.bind(0, '127.0.0.1', () => r()));
  main.on('message', () => {});
  const port = main.address().port;
  const s = createSocket('udp4');
  t.teardown(() => s.close());
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const q = require('node:dgram').createSocket({ type: 'udp4', reusePort: true, recvBufferSize: 4096 });
    q.bind(workerData.port, '127.0.0.1', () => q.connect(workerData.from, '127.0.0.1', () => {
      parentPort.postMessage('connected');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
      q.close();
    }));`;
  const w = new Worker(code, { eval: true, workerData: { port, from: s.address().port } });
  t.teardown(() => w.terminate());
  await new Promise((r) => w.once('message', r));
  const payload = Buffer.alloc(100);
  await Promise.all(Array.from({ length: 500 }, () => new Promise((r) => s.send(payload, port, '127.0.0.1', r))));
  t.same(udpBacklog(port), { queued: 0, drops: 0 }, "the flow's drops are on its own socket, the port's queue is empty");
});
