// One answering thread (threads.ts): DnsServers on the owner's addresses and ports, bound with
// SO_REUSEPORT and sharing this thread's answer cache, whose misses go to the owner. It tells the
// owner once it listens (or why it cannot), and drops cached answers, reports its counts and stops
// when told.

import { parentPort, workerData } from 'node:worker_threads';
import { AnswerCache } from '../dns/answer-cache.ts';
import { DnsServer } from '../dns/server.ts';
import type { Answer, Handler } from '../dns/server.ts';
import { ThreadChannel } from './channel.ts';
import type { RemoteQuery, ThreadObserver, ThreadStart, ThreadStats } from './messages.ts';

async function serve(port: NonNullable<typeof parentPort>, s: ThreadStart): Promise<void> {
  let channel: ThreadChannel | undefined;
  // The request's own bytes, copied: a view would take its whole receive buffer along.
  const handler: Handler = (q) => channel!.request('query', { wire: Uint8Array.from(q.wire), transport: q.transport, address: q.remoteAddress, port: q.remotePort, prefetch: q.prefetch } satisfies RemoteQuery) as Promise<Answer | null>;
  const cache = new AnswerCache({ maxBytes: s.answerCacheBytes, maxEntries: s.answerCacheEntries });
  const watch: ThreadObserver | undefined = s.observerModule === undefined ? undefined : ((await import(s.observerModule)) as { threadObserver(args: unknown): ThreadObserver }).threadObserver(s.observerArgs);
  const onCacheHit = s.reportHits ? (req: Buffer, nameEnd: number, address: string) => channel!.notify('hit', { req: Uint8Array.from(req), nameEnd, address }) : undefined;
  const servers = s.listen.map((l) => new DnsServer({ handler, address: l.address, port: l.port, answerCache: cache, reusePort: true, roundRobin: s.roundRobin, maxUdpSize: s.maxUdpSize, maxTcpConnections: s.maxTcpConnections, onCacheHit, observer: watch?.observer, onReply: watch?.onReply }));
  const stats = (): ThreadStats => {
    const { hits, insertions, evictions, expired } = cache.stats;
    // postMessage clones it as it sends: no copy here.
    return { servers: servers.map((x) => x.stats), cache: { entries: cache.size, bytes: cache.bytes, maxBytes: cache.maxBytes, hits, insertions, evictions, expired, timed: cache.timed }, observed: watch?.snapshot() };
  };
  channel = new ThreadChannel(port, {
    invalidate: (groups) => servers[0]?.invalidate(groups as string[] | undefined),
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
