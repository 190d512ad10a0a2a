// One answering thread (threads.ts): DnsServers on the owner's addresses and ports, bound with
// SO_REUSEPORT and sharing this thread's answer cache, whose misses go to the owner. It tells the
// owner once it listens (or why it cannot), and drops cached answers, reports its counts and stops
// when told. Under a partitioned cache it keeps the askers' partitions the owner's replies tell
// (askers.ts).

import { parentPort, workerData } from 'node:worker_threads';
import { AnswerCache } from '../dns/answer-cache.ts';
import { LIMITED } from '../dns/fairness.ts';
import { DnsServer } from '../dns/server.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import { AskerPartitions } from './askers.ts';
import { ThreadChannel } from './channel.ts';
import { BEHIND_AT, MAX_WAITING, OWNER_BACKLOG } from './messages.ts';
import type { AskerChanged, RemoteAnswer, RemoteQuery, ThreadObserver, ThreadStart, ThreadStats } from './messages.ts';

async function serve(port: NonNullable<typeof parentPort>, s: ThreadStart): Promise<void> {
  let channel: ThreadChannel | undefined;
  const askers = new AskerPartitions(s.epoch);
  let waiting = 0;
  const answered = (q: Query, r: RemoteAnswer): Answer | null => {
    waiting--;
    if (r.partition !== undefined) askers.learn(q.remoteAddress, q.clientSubnet !== null, r.partition, r.epoch);
    if (r.limited) q.dropReason = LIMITED;
    if (r.holdMs !== undefined) q.holdMs = r.holdMs;
    return r.answer;
  };
  const failed = (err: unknown): never => {
    waiting--;
    throw err;
  };
  // The request's own bytes, copied: a view would take its whole receive buffer along.
  const handler =
    (listen: number): Handler =>
    (q) => {
      if (waiting >= MAX_WAITING) {
        q.dropReason = OWNER_BACKLOG;
        return null;
      }
      waiting++;
      const r = channel!.request('query', { wire: Uint8Array.from(q.wire), transport: q.transport, address: q.remoteAddress, port: q.remotePort, listen, prefetch: q.prefetch, behind: waiting > BEHIND_AT } satisfies RemoteQuery) as Promise<RemoteAnswer>;
      return r.then((a) => answered(q, a), failed);
    };
  const cache = new AnswerCache({ maxBytes: s.answerCacheBytes, maxEntries: s.answerCacheEntries });
  const watch: ThreadObserver | undefined = s.observerModule === undefined ? undefined : ((await import(s.observerModule)) as { threadObserver(args: unknown): ThreadObserver }).threadObserver(s.observerArgs);
  const onCacheHit = s.reportHits ? (req: Buffer, nameEnd: number, address: string) => channel!.notify('hit', { req: Uint8Array.from(req), nameEnd, address }) : undefined;
  const servers = s.listen.map((l, i) => new DnsServer({ handler: handler(i), address: l.address, port: l.port, answerCache: cache, reusePort: true, joinsPort: true, roundRobin: s.roundRobin, maxUdpSize: s.maxUdpSize, maxTcpConnections: s.maxTcpConnections, onCacheHit, observer: watch?.observer, onReply: watch?.onReply }));
  const partition = (on: boolean) => {
    for (const x of servers) x.partitionCache(on ? askers.of : null);
  };
  partition(s.partitioned);
  const stats = (): ThreadStats => {
    const { hits, insertions, evictions, expired } = cache.stats;
    // postMessage clones it as it sends: no copy here.
    return { servers: servers.map((x) => x.stats), cache: { entries: cache.size, bytes: cache.bytes, maxBytes: cache.maxBytes, hits, insertions, evictions, expired, timed: cache.timed }, observed: watch?.snapshot() };
  };
  channel = new ThreadChannel(port, {
    invalidate: (groups) => servers[0]?.invalidate(groups as string[] | undefined),
    partition: (on) => partition(on as boolean),
    // An answer to a miss already on its way may be the asker's new partition's: the cache's
    // generation moves on, so that it is not kept under the one this thread knew.
    askerChanged: (c) => {
      const { address, epoch } = c as AskerChanged;
      if (askers.forget(address, epoch)) servers[0]?.invalidate([]);
    },
    stats,
    stop: () => Promise.all(servers.map((x) => x.close())),
  });
  try {
    for (const x of servers) await x.listen();
  } catch (err) {
    await Promise.all(servers.map((x) => x.close(0)));
    channel.notify('failed', (err as Error).message);
    return;
  }
  channel.notify('listening');
}

if (parentPort !== null) await serve(parentPort, workerData as ThreadStart);
