// More threads answering on the addresses and ports this one serves (worker_threads): each thread
// has its own DnsServers, bound with SO_REUSEPORT (the kernel spreads clients over the threads by
// address and port) and sharing one answer cache of its own, so a cache hit costs no other thread
// anything. A miss goes to this thread: the owner's handler answers it, as it answers its own
// misses, and the asking thread caches the answer as a DnsServer does. invalidate() reaches every
// thread's cache, in order with the answers: an answer made before a change is followed by the
// change, and the generation check drops it. partitionCache() splits every thread's cache as the
// owner's (askers.ts: each thread learns an asker's partition from the owner's replies).

import { Worker } from 'node:worker_threads';
import { DEFAULT_MAX_TCP_CONNECTIONS } from '../dns/server.ts';
import type { Answer, CachePartition, DnsServer, Handler } from '../dns/server.ts';
import { optViewOf, queryFromWire } from '../dns/query-from-wire.ts';
import { Rcode } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Fairness } from '../dns/fairness.ts';
import type { OptView } from '../dns/question.ts';
import type { Logger } from '../log/log.ts';
import { ThreadChannel } from './channel.ts';
import type { AskerChanged, RemoteAnswer, RemoteQuery, ThreadStart, ThreadStats } from './messages.ts';

export { MAX_WAITING } from './messages.ts';

export type { RemoteQuery, ThreadStats } from './messages.ts';

/**
 * One thread's cap on open TCP connections, of `threads` in all: the process keeps the one-thread
 * bound (the kernel spreads connections over the threads' listeners, and each evicts at its own cap).
 */
export function tcpConnectionsShare(threads: number): number {
  return Math.ceil(DEFAULT_MAX_TCP_CONNECTIONS / threads);
}

/**
 * The module `name` beside the module at `base` (an import.meta.url), in the same form: run from the
 * sources (.ts) or from dist/ (.js). For a thread's entry, and an observerModule.
 */
export function siblingModule(base: string, name: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

const WORKER_ENTRY = siblingModule(import.meta.url, 'worker');

export interface DnsThreadsOptions {
  /** Threads to start besides this one. */
  count: number;
  /** What each thread serves: the addresses and ports this thread bound (with SO_REUSEPORT). */
  listen: readonly { address: string; port: number }[];
  /** Each thread's answer cache budget (bytes; 0: none), and at most this many entries (absent: no count limit). */
  answerCacheBytes: number;
  answerCacheEntries?: number;
  roundRobin: boolean;
  /** Every thread's DnsServers' maxUdpSize. */
  maxUdpSize?: number;
  /** Answers every thread's misses (this thread's handler). */
  handler: Handler;
  /** This thread's fair shares of misses (pkg/dns fairness.ts): every thread's misses are admitted by it, or dropped. */
  fairness?: Fairness;
  /**
   * This thread's DnsServers on `listen`, in its order: a UDP miss another thread read that fair
   * shares dropped, or admitted, is told to its address's server, whose flow steering then sees the
   * whole flood (a flooding flow on another thread's socket would otherwise never get a queue of its own).
   */
  servers?: readonly Pick<DnsServer, 'flowDropped' | 'flowMissed'>[];
  log: Logger;
  /**
   * A module (URL) whose `threadObserver()` (messages.ts ThreadObserver) each thread makes and hands
   * its DnsServers; its snapshot comes back with stats() (kube-dns: its metrics' counts).
   */
  observerModule?: string;
  /** Handed to each thread's `threadObserver(args)` (cloneable). */
  observerArgs?: unknown;
  /** Every thread's cache hits, seen here (dnscache --log-queries): each hit then costs a message. */
  onCacheHit?: (req: Buffer, nameEnd: number, remoteAddress: string) => void;
}

/** A miss over its share that Fairness.refuses() answers: REFUSED, as DnsServer answers its own. */
const REFUSED: Answer = { message: { ...emptyMessage(), qr: true, rcode: Rcode.REFUSED } };

/**
 * The owner's side of a miss, as the reply to send (its `epoch` is replyRemote's to set): the Query
 * made again from its bytes, the handler's answer made cloneable; or why it was dropped.
 */
async function answerRemote(o: DnsThreadsOptions, r: RemoteQuery, wire: Buffer, view: OptView | null): Promise<RemoteAnswer> {
  const epoch = 0; // replyRemote sets it as the reply is sent
  const { handler, fairness } = o;
  if (r.behind) fairness?.behind();
  // Admitted here, where the work is done, before the query is parsed; a drop is the thread's to count.
  // (undefined: not counted: no fairness, or the cache's own prefetch.)
  const who = fairness === undefined || r.prefetch ? undefined : fairness.askerOf(wire, r.address, view!);
  const asker = who === undefined ? undefined : fairness!.admit(who);
  if (asker === null) {
    // Its own flow: over UDP a candidate for a queue of its own; over TCP its connection is held
    // where it is read until this window ends (refuses() answers only a cache's pods).
    if (who === r.address) {
      if (r.transport === 'udp') o.servers?.[r.listen]?.flowDropped(r.address, r.port);
      else return { answer: null, limited: true, holdMs: fairness!.windowLeftMs(), epoch };
    }
    return fairness!.refuses(r.transport, who!, r.address) ? { answer: REFUSED, epoch } : { answer: null, limited: true, epoch };
  }
  if (who === r.address && r.transport === 'udp') o.servers?.[r.listen]?.flowMissed(r.address, r.port);
  const since = asker !== undefined ? fairness!.started(asker) : 0;
  try {
    return { answer: cloneable(await handler(queryFromWire(wire, r.transport, r.address, r.port, r.prefetch))), epoch };
  } finally {
    if (asker !== undefined) fairness!.finished(asker, since);
  }
}

/** A partition for askers (DnsThreads.partitionCache), and the owner's count of changes to it. */
interface Partitioning {
  of: CachePartition | null;
  epoch: number;
}

/** The reply to a thread's miss: the answer, and the asker's partition read as it is sent (after the answer is made). */
async function replyRemote(o: DnsThreadsOptions, r: RemoteQuery, p: Partitioning): Promise<RemoteAnswer> {
  const wire = Buffer.from(r.wire.buffer, r.wire.byteOffset, r.wire.byteLength);
  // Its OPT read once, for fair shares and the partition alike.
  const view = o.fairness !== undefined || p.of !== null ? optViewOf(wire) : null;
  const reply = await answerRemote(o, r, wire, view);
  // Read as it is sent, after the answer is made (one object a miss: filled in, not copied).
  reply.epoch = p.epoch;
  if (p.of !== null) reply.partition = p.of(r.address, view!);
  return reply;
}

/** An answer made cloneable for the thread that asked. */
function cloneable(answer: Answer | null): Answer | null {
  // A Buffer view of a pooled slab would be copied whole by the structured clone: just its bytes.
  return answer?.wire === undefined ? answer : { ...answer, wire: Uint8Array.from(answer.wire) };
}

export class DnsThreads {
  private readonly o: DnsThreadsOptions;
  private readonly threads: { worker: Worker; channel: ThreadChannel }[] = [];
  private stopping = false;
  private readonly partitioning: Partitioning = { of: null, epoch: 0 };

  constructor(o: DnsThreadsOptions) {
    this.o = o;
  }

  /** Starts every thread; resolves once each listens, rejects (all stopped) when one cannot. */
  async start(): Promise<void> {
    try {
      await Promise.all(Array.from({ length: this.o.count }, (_, i) => this.startThread(i + 1)));
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** What a change dropped: the cached answers of `groups`, or with none every one, in every thread. */
  invalidate(groups?: Iterable<string>): void {
    const list = groups === undefined ? undefined : [...groups];
    for (const t of this.threads) t.channel.notify('invalidate', list);
  }

  /**
   * Splits every thread's answer cache as `fn` splits this thread's (DnsServer.partitionCache; null:
   * one cache for all again). `fn` may read the asker's address and whether the query has a Client
   * Subnet, nothing else: each thread learns an asker's partition from the replies to its misses.
   * Say when an asker's partition may have changed: askerChanged().
   */
  partitionCache(fn: CachePartition | null): void {
    if ((fn === null) === (this.partitioning.of === null)) {
      this.partitioning.of = fn;
      return;
    }
    this.partitioning.of = fn;
    this.askerChanged(null);
    for (const t of this.threads) t.channel.notify('partition', fn !== null);
  }

  /**
   * `address`'s partition (an IPv4 address; null: any asker's) may have changed: every thread forgets
   * what it learned of it, in order with the replies to its misses, before any answer made since.
   */
  askerChanged(address: string | null): void {
    const change: AskerChanged = { address, epoch: ++this.partitioning.epoch };
    for (const t of this.threads) t.channel.notify('askerChanged', change);
  }

  /** Every thread's counts. */
  stats(): Promise<ThreadStats[]> {
    return Promise.all(this.threads.map((t) => t.channel.request('stats') as Promise<ThreadStats>));
  }

  /** Every thread stops taking queries, answers those in flight (its misses still come here), and ends. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.threads.map(async ({ worker, channel }) => {
        await channel.request('stop').catch(() => undefined);
        await worker.terminate();
      }),
    );
  }

  private startThread(index: number): Promise<void> {
    const { listen, answerCacheBytes, answerCacheEntries, roundRobin, maxUdpSize } = this.o;
    const onCacheHit = this.o.onCacheHit;
    const maxTcpConnections = tcpConnectionsShare(this.o.count + 1);
    const partitioned = this.partitioning.of !== null;
    const workerData: ThreadStart = { listen: [...listen], answerCacheBytes, answerCacheEntries, roundRobin, maxUdpSize, maxTcpConnections, index, reportHits: onCacheHit !== undefined, observerModule: this.o.observerModule, observerArgs: this.o.observerArgs, partitioned, epoch: this.partitioning.epoch };
    const worker = new Worker(WORKER_ENTRY, { workerData });
    const channel = new ThreadChannel(worker, {
      query: (r) => replyRemote(this.o, r as RemoteQuery, this.partitioning),
      hit: (h) => {
        const { req, nameEnd, address } = h as { req: Uint8Array; nameEnd: number; address: string };
        onCacheHit?.(Buffer.from(req.buffer, req.byteOffset, req.byteLength), nameEnd, address);
      },
    });
    this.threads.push({ worker, channel });
    // A thread that ends unasked leaves its share of the clients unanswered (their flows stay hashed
    // to its closed socket's group slot until the kernel rehashes): end the process, whose supervisor
    // (the kubelet, the nanny) starts it again whole.
    worker.on('exit', (code) => {
      if (this.stopping) return;
      this.o.log.error('a worker thread ended: stopping', { thread: index, code });
      process.exit(1);
    });
    return new Promise((resolve, reject) => {
      worker.once('error', reject);
      channel.once('listening', () => resolve());
      channel.once('failed', (err) => reject(new Error(`thread ${index}: ${String(err)}`)));
    });
  }
}
