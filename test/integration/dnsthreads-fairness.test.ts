// Fair shares with --workers' threads (pkg/dnsthreads) on loopback: a second thread on the port reads
// its share of the clients' flows (SO_REUSEPORT hashes them) and sends its misses here, where the
// shares are kept. A flood from 8 flows of one asker (dnsperf -c 8) lands on both threads; every one
// of its flows must get a queue of its own (udp-steer.ts), not only those this thread reads: a flow
// left on another thread's socket makes every query of it a message to this one, and the others'
// misses wait behind them (bench:fair, 16 cores, --workers=4: hits' p99 0.3 → 770 ms).

import t from 'tap';
import type { Test } from 'tap';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { Fairness } from '../../pkg/dns/fairness.ts';
import type { Answer, Query } from '../../pkg/dns/server.ts';
import { DnsThreads, MAX_WAITING } from '../../pkg/dnsthreads/threads.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { startServer } from '../helpers/dns-server.ts';
import { askFrom, connectedTo, costly, floodNames, pipelinedBurst } from '../helpers/flood.ts';
import { eventually } from '../helpers/eventually.ts';

const FLOWS = 8;

t.test("a flood's flows that another thread reads get queues of their own too; the others are answered", async (t) => {
  const fairness = new Fairness();
  t.teardown(() => fairness.close());
  // A short receive queue: the flood backs it up on any machine.
  const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0, udpRecvBufferSize: 64 * 1024, reusePort: true });
  const threads = new DnsThreads({ count: 1, listen: [{ address: '127.0.0.1', port }], answerCacheBytes: 0, roundRobin: false, handler: costly, fairness, servers: [server], log: createLogger('test') });
  t.teardown(() => threads.stop());
  await threads.start();
  const stop = await floodNames(t, port, '127.0.0.66', 40_000, 'flood.test', ['-c', String(FLOWS)]);
  await eventually(() => connectedTo(port, '127.0.0.66') === FLOWS, `every one of the flood's ${FLOWS} flows on a socket of its own`, 8000).catch(() => undefined);
  t.equal(connectedTo(port, '127.0.0.66'), FLOWS, `the flood's flows steered, whichever thread read them (${fairness.steeredFlows})`);
  // Two tries, as a pod's resolver makes: one question of 20 went unanswered once in a full CI run
  // (not seen in 55 runs beside the other flood tests, every flow steered throughout), where two
  // cores run two test files at once beside the flood; a loss of its own would fail either way.
  const others = await Promise.all(['127.0.0.2', '127.0.0.3'].map((from) => askFrom(port, from, Array.from({ length: 10 }, (_, i) => `w${i}.${from.replace(/\./g, '-')}.test`), 2)));
  t.same(others.map((o) => o.answered), [10, 10], `every question of the others answered (slowest ${others.map((o) => Math.round(o.slowestMs)).join(', ')} ms)`);
  stop();
  await eventually(() => connectedTo(port, '127.0.0.66') === 0, 'the flows back on the port once the asker is let go', 5000);
});

t.test("a flood read by another thread, whose misses the owner falls behind on, is steered off that thread: the owner's backlog is pressure, as a queue backing up", async (t) => {
  const { fairness, port, threads } = await ownerAndThread(t);
  // One flow, on the other thread's socket. That thread only passes misses on, fast enough that no
  // socket's queue backs up. A try on this thread's socket backs it up: sharing must end (and its
  // steering with it) before the next.
  const stop = await floodOneFlow(t, port, threads, 10_000, 'other', () => eventually(() => !fairness.shared, 'sharing over before the next try', 5000));
  // The owner busy with work of its own, 180 ms of every 200 (as a big change being applied): the
  // thread's misses wait on it past MAX_WAITING, on any machine.
  const owner = setInterval(() => {
    const until = performance.now() + 180;
    while (performance.now() < until);
  }, 200);
  t.teardown(() => clearInterval(owner));
  await eventually(() => connectedTo(port, '127.0.0.66') === 1, "the flood's flow on a socket of its own", 8000).catch(() => undefined);
  const dropped = ((await threads.stats())[0].observed as { dropped: Record<string, number> }).dropped;
  t.equal(connectedTo(port, '127.0.0.66'), 1, `the flood's flow steered off the other thread's socket (that thread's drops: ${JSON.stringify(dropped)})`);
  // The owner still as busy: the others' misses, whichever thread reads them, are no longer dropped behind the flood's.
  const others = await Promise.all(['127.0.0.2', '127.0.0.3'].map((from) => askFrom(port, from, Array.from({ length: 10 }, (_, i) => `w${i}.${from.replace(/\./g, '-')}.test`), 2)));
  t.same(others.map((o) => o.answered), [10, 10], `every question of the others answered (slowest ${others.map((o) => Math.round(o.slowestMs)).join(', ')} ms)`);
  clearInterval(owner);
  stop();
});

t.test('a thread sends the owner at most MAX_WAITING misses at once: an owner that falls behind is not buried under messages; once it answers, misses flow again', async (t) => {
  // The owner's handler for other threads' misses holds every answer until told (an owner far behind).
  let remote = 0;
  let release: () => void = () => undefined;
  let held = new Promise<void>((r) => (release = r));
  const holding = async (q: Query): Promise<Answer> => {
    remote++;
    await held;
    return costly(q);
  };
  const { port } = await startServer(t, { handler: costly, answerCacheBytes: 0, reusePort: true });
  // kube-dns's thread observer: its counts are what kubedns_dns_dropped_requests_total shows.
  const observerModule = new URL('../../pkg/kubedns/thread-observer.ts', import.meta.url).href;
  const threads = new DnsThreads({ count: 1, listen: [{ address: '127.0.0.1', port }], answerCacheBytes: 0, roundRobin: false, handler: holding, observerModule, log: createLogger('test') });
  t.teardown(() => threads.stop());
  await threads.start();
  // 8 flows of new names: about half land on the other thread's socket. Flooded until the owner holds
  // MAX_WAITING of them (how soon depends on the machine: a loaded one sent 3,500 in 2.5 s), then
  // half a second more, past it.
  const stop = await floodNames(t, port, '127.0.0.66', 10_000, 'held.test', ['-c', String(FLOWS)]);
  await eventually(() => remote >= MAX_WAITING, `the owner sent ${MAX_WAITING} misses`, 15_000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 500));
  stop();
  const offered = remote;
  t.ok(remote > 0 && remote <= MAX_WAITING, `the owner was sent ${remote} misses while it answered none (at most ${MAX_WAITING})`);
  const [thread] = await threads.stats();
  const dropped = (thread.observed as { dropped: Record<string, number> }).dropped;
  t.ok((dropped['owner-backlog'] ?? 0) > 0, `the rest dropped under a reason of their own (${JSON.stringify(dropped)})`);
  t.equal(dropped.handler, undefined, "not as a handler's null answer");
  release();
  held = Promise.resolve();
  await eventually(async () => {
    await askFrom(port, '127.0.0.2', Array.from({ length: 8 }, (_, i) => `again${i}-${Math.random()}.test`));
    return remote > offered;
  }, 'misses sent again once the owner answered', 10_000);
  t.pass('the thread sends misses again');
});

t.test("over TCP to another thread, a burst of pipelined misses over its asker's share is held there as on the owner's socket: read at that share a window (answers half a second on), its drops counted as limited", async (t) => {
  const { fairness, port, threads } = await ownerAndThread(t);
  // A flood that keeps this thread busy, so that misses are shared: one flow, on this thread's
  // socket (on the other one its misses would pile up first as the owner's backlog).
  const stop = await floodOneFlow(t, port, threads, 20_000, 'owner');
  await eventually(() => fairness.shared, 'misses shared', 5000);
  // SO_REUSEPORT hashes each connection to one thread's socket: connect until the other thread has one.
  const socket = await connectToThread(port, '127.0.0.68', async () => (await threads.stats())[0].servers[0].tcpConnections === 1);
  t.teardown(() => socket.destroy());
  const burst = await pipelinedBurst(socket, 2000);
  stop();
  t.ok(burst.late > 0, `answers after 500 ms: ${burst.late} of ${burst.answered} (the first within ${burst.firstMs} ms)`);
  t.ok(burst.answered < 2000, 'not every one: it is over its share');
  const dropped = ((await threads.stats())[0].observed as { dropped: Record<string, number> }).dropped;
  t.ok((dropped.limited ?? 0) > 0, `the other thread counts the drops as limited (${JSON.stringify(dropped)})`);
  t.equal(dropped.handler, undefined, "not as a handler's null answer");
});

t.test("a flood read by another thread, making most of the misses as the owner falls behind, is steered off that thread before any of its misses is dropped, and its asker named", async (t) => {
  // Windows stepped by the test, the thread read as 0.6 busy: misses counted by flow, not shared for busyness.
  const named: string[] = [];
  const { fairness, port, threads } = await ownerAndThread(t, { windowMs: 3_600_000, busy: () => 0.6, onLimited: (a, on) => named.push(`${a.address} ${on ? 'limited' : 'let go'}`) });
  const stop = await floodOneFlow(t, port, threads, 2000, 'other');
  fairness.tick(); // counting afresh: only the flow that reached the other thread
  // The owner held 800 ms: ~1,600 of the flow's misses wait on it, past BEHIND_AT (1,024), short of
  // MAX_WAITING. Read once it is free, they are the window's pressure, and nearly all its misses.
  const until = performance.now() + 800;
  while (performance.now() < until);
  await new Promise((r) => setTimeout(r, 1500));
  fairness.tick();
  stop();
  t.equal(connectedTo(port, '127.0.0.66'), 1, "the flood's flow on a socket of its own");
  t.equal(fairness.stats.dropped, 0, 'none of its misses dropped over a share');
  t.same(named, ['127.0.0.66 limited'], 'its asker named');
});

/** A TCP connection from `from` to `port` that `landed()` says another thread took (each try a new source port). */
async function connectToThread(port: number, from: string, landed: () => Promise<boolean>): Promise<Socket> {
  for (let tries = 0; ; tries++) {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    await once(socket, 'connect');
    await new Promise((r) => setTimeout(r, 50));
    if (await landed()) return socket;
    socket.destroy();
    if (tries >= 50) throw new Error('no connection reached the other thread in 50 tries');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** This thread's server with fair shares and one more thread on its port, whose counts are kube-dns's (its thread observer: kubedns_dns_dropped_requests_total). */
async function ownerAndThread(t: Test, options: ConstructorParameters<typeof Fairness>[0] = {}) {
  const fairness = new Fairness(options);
  t.teardown(() => fairness.close());
  const { server, port } = await startServer(t, { handler: costly, fairness, answerCacheBytes: 0, reusePort: true });
  const observerModule = new URL('../../pkg/kubedns/thread-observer.ts', import.meta.url).href;
  const threads = new DnsThreads({ count: 1, listen: [{ address: '127.0.0.1', port }], answerCacheBytes: 0, roundRobin: false, handler: costly, fairness, servers: [server], observerModule, log: createLogger('test') });
  t.teardown(() => threads.stop());
  await threads.start();
  return { fairness, port, threads };
}

/**
 * A flood of one flow at `perSecond` (one source port: SO_REUSEPORT hashes it to one socket of the
 * port), started again from another source port until `on` reads it; `between` runs between tries.
 */
async function floodOneFlow(t: Test, port: number, threads: DnsThreads, perSecond: number, on: 'owner' | 'other', between?: () => Promise<unknown>): Promise<() => void> {
  const otherQueries = async () => (await threads.stats())[0].servers[0].queries;
  for (let tries = 0; ; tries++) {
    const before = await otherQueries();
    const stop = await floodNames(t, port, '127.0.0.66', perSecond, 'flood.test');
    await new Promise((r) => setTimeout(r, 300));
    if (((await otherQueries()) - before >= 100) === (on === 'other')) return stop;
    stop();
    if (tries >= 20) throw new Error(`the flood never reached the ${on} thread's socket in 20 tries`);
    await between?.();
  }
}
