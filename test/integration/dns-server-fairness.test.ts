// DnsServer with Fairness, on loopback: a handler that takes 0.3 ms of the thread per miss, one asker
// (127.0.0.66) flooding new names at 20,000 a second, three others (127.0.0.2-4, real dig) asking
// new names one after another. With fairness the others' misses are all answered, and the flooder is
// named limited and let go after; without it, the same flood leaves the others' questions queued
// behind it. A flood that backs up the receive queue is steered to a queue of its own. Over TCP, a
// miss over its share is answered REFUSED.

import t from 'tap';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Fairness } from '../../pkg/dns/fairness.ts';
import { withClientSubnet } from '../../pkg/dns/client-subnet.ts';
import { udpBacklog } from '../../pkg/dns/udp-backlog.ts';
import { query, startServer } from '../helpers/dns-server.ts';
import { askFrom, connectedTo, costly, floodNames, pipelinedBurst } from '../helpers/flood.ts';
import { eventually } from '../helpers/eventually.ts';
import { makeQuery } from '../helpers/packets.ts';
import { frame, splitFrames } from '../helpers/tcp-frames.ts';

/**
 * A node program sending its first argument (hex) to 127.0.0.1:<second argument> as fast as it can,
 * or <third argument> datagrams a millisecond, for 10 s at most.
 */
const SEND_FOR_10_S = `const s = require('node:dgram').createSocket('udp4'); const q = Buffer.from(process.argv[1], 'hex');
const send = (n) => { for (let i = 0; i < n; i++) s.send(q, Number(process.argv[2]), '127.0.0.1'); };
setTimeout(() => process.exit(0), 10000);
if (process.argv[3]) setInterval(() => send(Number(process.argv[3])), 1);
else (function burst() { send(50); setImmediate(burst); })();`;

t.test('a flooding asker is held to its share while the thread is busy; the others are answered, every one', async (t) => {
  const events: [string, boolean][] = [];
  const fairness = new Fairness({ onLimited: (a, on) => events.push([a.address, on]) });
  t.teardown(() => fairness.close());
  const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0 });
  const stop = await floodNames(t, port, '127.0.0.66', 20_000, 'flood.test');
  await new Promise((r) => setTimeout(r, 500));
  const others = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((from) => askFrom(port, from, Array.from({ length: 10 }, (_, i) => `n${i}.${from.replace(/\./g, '-')}.test`))));
  stop();
  t.same(others.map((o) => o.answered), [10, 10, 10], `every question of the others answered (slowest ${others.map((o) => Math.round(o.slowestMs)).join(', ')} ms)`);
  // Dropped here over its share; once its flow is steered (the queue backing up: a loaded machine),
  // most of the rest are dropped by the kernel on its own small queue, never read (889 here in one run).
  t.ok(server.stats.dropped > 0, `the flood's misses over its share dropped (${server.stats.dropped} here)`);
  t.same(events[0], ['127.0.0.66', true], 'the flooder named when limited');
  await new Promise((r) => setTimeout(r, 1500));
  t.same(events, [['127.0.0.66', true], ['127.0.0.66', false]], 'and when let go, a calm second after the flood');
  t.notOk(fairness.shared, 'no longer shared');
});

t.test('without fairness the same flood queues the others behind it', async (t) => {
  const { port } = await startServer(t, { handler: costly, answerCacheBytes: 0 });
  const stop = await floodNames(t, port, '127.0.0.66', 20_000, 'flood.test');
  await new Promise((r) => setTimeout(r, 500));
  const [one] = await Promise.all([askFrom(port, '127.0.0.2', ['n0.other.test', 'n1.other.test', 'n2.other.test'])]);
  stop();
  t.ok(one.answered < 3 || one.slowestMs > 500, `lost or slow (${one.answered} of 3 answered, slowest ${Math.round(one.slowestMs)} ms)`);
});

t.test("a flood that backs up the port's queue gets a queue of its own (a socket connected to its flow); the others are answered; back when it stops", async (t) => {
  const fairness = new Fairness();
  t.teardown(() => fairness.close());
  // A short receive queue: the flood backs it up on any machine.
  const { port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0, udpRecvBufferSize: 64 * 1024 });
  t.equal(connectedTo(port, '127.0.0.66'), 0, 'no flow steered before the flood');
  const stop = await floodNames(t, port, '127.0.0.66', 40_000, 'flood.test');
  await eventually(() => connectedTo(port, '127.0.0.66') > 0, "the flooder's flow on a socket of its own", 5000);
  t.equal(fairness.steeredFlows, 1);
  const others = await Promise.all(['127.0.0.2', '127.0.0.3'].map((from) => askFrom(port, from, Array.from({ length: 10 }, (_, i) => `s${i}.${from.replace(/\./g, '-')}.test`))));
  t.same(others.map((o) => o.answered), [10, 10], `every question of the others answered (slowest ${others.map((o) => Math.round(o.slowestMs)).join(', ')} ms)`);
  stop();
  await eventually(() => connectedTo(port, '127.0.0.66') === 0 && fairness.steeredFlows === 0, 'the flow back on the port once its asker is let go', 5000);
});

// Without a drain the flood goes on, so only the close can have taken the flow's socket away this
// soon. A drain lasts several of the fair shares' windows, and the flood fills each: its flow may be
// given a socket again while the server drains, after the close let go of the first.
for (const [drainMs, what] of [
  [0, "a server closed while a flow is steered closes the flow's socket too"],
  [1000, 'a server closed with a drain while the flood goes on leaves no socket on the port either'],
] as const) {
  t.test(what, async (t) => {
    const fairness = new Fairness();
    t.teardown(() => fairness.close());
    const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0, udpRecvBufferSize: 64 * 1024 });
    const stop = await floodNames(t, port, '127.0.0.66', 40_000, 'flood.test');
    await eventually(() => connectedTo(port, '127.0.0.66') > 0, "the flooder's flow on a socket of its own", 5000);
    await server.close(drainMs);
    await new Promise((r) => setTimeout(r, 100));
    t.equal(connectedTo(port, '127.0.0.66'), 0, 'no socket left on the port');
    stop();
  });
}

t.test("over TCP, a miss over its share of a pod behind one of our caches is answered REFUSED at once (nothing is sent again over TCP); a flooder's own connection gets nothing", async (t) => {
  const CACHE = '127.0.0.67';
  const fairness = new Fairness({ trustsSubnetOf: (a) => a === CACHE });
  t.teardown(() => fairness.close());
  // Every query is counted once: answered (under its rcode) or dropped.
  const counted = { responses: 0, dropped: 0 };
  const observer = { response: () => counted.responses++, dropped: () => counted.dropped++ };
  const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0, observer });
  const stop = await floodNames(t, port, '127.0.0.66', 20_000, 'flood.test');
  t.teardown(stop);
  await eventually(() => fairness.shared, 'misses shared', 5000);
  const QUERIES = 2000;
  // One connection pipelining a burst of new names: node-cache's to kube-dns for a busy pod behind
  // it (its address in the Client Subnet), then the same burst from a client asking for itself.
  // `waitMs`: how long its answers are awaited (the client asking for itself never gets them all).
  const burst = async (from: string, query: (id: number) => Uint8Array, waitMs: number) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    t.teardown(() => socket.destroy());
    await once(socket, 'connect');
    const rcodes = new Map<number, number>();
    splitFrames(socket, (msg) => rcodes.set(msg.readUInt16BE(0), msg[3] & 0x0f));
    for (let id = 0; id < QUERIES; id++) socket.write(frame(query(id)));
    await eventually(() => rcodes.size === QUERIES, 'every query answered', waitMs).catch(() => undefined);
    socket.destroy();
    return { answered: rcodes.size, refused: [...rcodes.values()].filter((r) => r === 5).length };
  };
  const pod = await burst(CACHE, (id) => withClientSubnet(makeQuery(`n${id}.pod.test`, id), '10.244.1.7')!, 5000);
  t.equal(pod.answered, QUERIES, `through the cache: every query answered (${pod.answered} of ${QUERIES})`);
  t.ok(pod.refused > 0 && pod.refused < QUERIES, `those over the pod's share REFUSED (${pod.refused}), the rest answered`);
  t.equal(counted.responses + counted.dropped, server.stats.queries, `a REFUSED is an answer, not also a drop: every query counted once (${counted.responses} answered, ${counted.dropped} dropped, ${server.stats.queries} asked)`);
  const own = await burst('127.0.0.68', (id) => makeQuery(`n${id}.own.test`, id), 2000);
  stop();
  t.ok(own.answered < QUERIES && own.refused === 0, `its own connection: what is over its share goes unanswered (${own.answered} of ${QUERIES} answered, none REFUSED)`);
});

t.test("over TCP, a burst of pipelined misses over its asker's share is read at that share a window, not worked through at once: answers to it still come half a second on", async (t) => {
  const fairness = new Fairness();
  t.teardown(() => fairness.close());
  const { port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0 });
  const stop = await floodNames(t, port, '127.0.0.66', 20_000, 'flood.test');
  t.teardown(stop);
  await eventually(() => fairness.shared, 'misses shared', 5000);
  // Another asker, whose burst alone is over its share (the flooder's own share goes to its datagrams).
  const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.68' });
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  const burst = await pipelinedBurst(socket, 2000);
  stop();
  t.ok(burst.late > 0, `answers after 500 ms: ${burst.late} of ${burst.answered} (the first within ${burst.firstMs} ms)`);
  t.ok(burst.answered < 2000, 'not every one: it is over its share');
});

t.test("a flow that made the window's misses, backing the queue up past 256 KiB of a big buffer, gets a queue of its own at that window's end, before any of its misses was dropped", async (t) => {
  // The thread's utilisation read as 0.6: misses are counted by flow and the queue is read, short of
  // sharing for busyness alone. Found 2026-11-29 (bench:fair, dnscache): a flood running unshared at
  // 0.7-0.85 busy burst as its sender caught up; the port's queue went to 3.5 MB in one window, and
  // every asker's query waited ~80 ms behind it while the flow was steered only a window later.
  const named: string[] = [];
  const fairness = new Fairness({ windowMs: 3_600_000, busy: () => 0.6, onLimited: (a, on) => named.push(`${a.address} ${on ? 'limited' : 'let go'}`) });
  t.teardown(() => fairness.close());
  const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0 });
  fairness.tick();
  // Two a millisecond: read as they come (0.3 ms a miss), until the thread is held.
  const sender = spawn(process.execPath, ['-e', SEND_FOR_10_S, query('q.burst.test', 1, 7).toString('hex'), String(port), '2'], { stdio: 'ignore' });
  t.teardown(() => sender.kill('SIGKILL'));
  await eventually(() => server.stats.cacheMisses >= 100, 'the flow read, 100 misses', 5000);
  // Held (a synchronous loop) while the sender goes on, until the queue holds 300 KB: what a burst
  // the thread cannot keep up with leaves.
  const until = Date.now() + 5000;
  let backlog = udpBacklog(port);
  while ((backlog?.queued ?? 0) < 300_000 && Date.now() < until) backlog = udpBacklog(port);
  fairness.tick();
  sender.kill('SIGKILL');
  t.ok(backlog !== null && backlog.queued >= 300_000 && backlog.queued < 1_000_000 && backlog.drops === 0, `the queue held ${backlog?.queued} bytes, none dropped`);
  t.equal(server.stats.dropped, 0, 'none of its misses dropped yet');
  t.ok(fairness.shared, 'misses shared');
  t.equal(connectedTo(port, '127.0.0.1'), 1, "the flow on a socket of its own already");
  t.same(named, ['127.0.0.1 limited'], 'its asker limited, named, though none of its misses was dropped');
  // Quiet for a second of windows (no drop), it is let go and its flow goes back, sharing or not.
  await eventually(() => udpBacklog(port)?.queued === 0, 'the queue read', 5000);
  for (let i = 0; i < 10; i++) fairness.tick();
  t.same(named, ['127.0.0.1 limited', '127.0.0.1 let go']);
  t.equal(connectedTo(port, '127.0.0.1'), 0, 'the flow back on the port');
});

t.test("within a window after a busy one, the queue is glanced at: a flow backing it up gets a queue of its own then, not at the window's end", async (t) => {
  // Windows of 4 s, the first ended by the test: glances 1, 2 and 3 s into the next.
  const fairness = new Fairness({ windowMs: 4000, busy: () => 0.6 });
  t.teardown(() => fairness.close());
  const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0 });
  fairness.tick();
  const windowStart = Date.now();
  const sender = spawn(process.execPath, ['-e', SEND_FOR_10_S, query('q.glance.test', 1, 7).toString('hex'), String(port), '2'], { stdio: 'ignore' });
  t.teardown(() => sender.kill('SIGKILL'));
  await eventually(() => server.stats.cacheMisses >= 100, 'the flow read, 100 misses', 5000);
  // Held past the first glance, until the queue holds 300 KB: that glance, due, comes before the queue is read.
  let backlog = udpBacklog(port);
  while (((backlog?.queued ?? 0) < 300_000 || Date.now() - windowStart < 1100) && Date.now() - windowStart < 3000) backlog = udpBacklog(port);
  t.ok((backlog?.queued ?? 0) >= 300_000, `the queue held ${backlog?.queued} bytes`);
  await eventually(() => connectedTo(port, '127.0.0.1') === 1, 'the flow on a socket of its own', 500);
  t.ok(Date.now() - windowStart < 4000, `before the window ended (${Date.now() - windowStart} ms into it)`);
  sender.kill('SIGKILL');
});

t.test("a queue backing up past a quarter of the buffer the kernel granted is pressure, where rmem_max caps what was asked for (a default node's 212,992 bytes)", async (t) => {
  const rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
  // The thread's utilisation read as 0.6: enough for the queue to be read, short of sharing for busyness alone.
  const fairness = new Fairness({ windowMs: 3_600_000, busy: () => 0.6 });
  t.teardown(() => fairness.close());
  const { port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0, udpRecvBufferSize: 16 * rmemMax });
  // Another process sends while this thread is held, so nothing reads the queue, until it holds half
  // of rmem_max: past a quarter of what was granted (rmem_max), well short of full (no drop, which
  // would be pressure of its own).
  const sender = spawn(process.execPath, ['-e', SEND_FOR_10_S, query('q.pressed.test', 1, 7).toString('hex'), String(port)], { stdio: 'ignore' });
  t.teardown(() => sender.kill('SIGKILL'));
  const until = Date.now() + 5000;
  let backlog = udpBacklog(port);
  while ((backlog?.queued ?? 0) < rmemMax / 2 && Date.now() < until) backlog = udpBacklog(port);
  sender.kill('SIGKILL');
  fairness.tick();
  t.ok(backlog !== null && backlog.queued >= rmemMax / 2 && backlog.drops === 0, `the queue held ${backlog?.queued} bytes, none dropped`);
  t.ok(fairness.shared, 'misses shared');
});
