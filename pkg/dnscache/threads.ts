// dnscache --workers=N: N threads answer (pkg/dnsthreads). This one is the owner: its DnsCache binds
// first, with SO_REUSEPORT, and its handler answers every thread's cache misses: one forwarder, one
// set of queries in flight (a question asked on two threads at once is one upstream query), one
// shared store of the answers (sharedStore: a question one thread's cache missed and another's
// asked before is answered from there and cached by the asker), one set of counters for the CHAOS
// statistics, which add the other threads' cache counts. Every thread answers its cache hits alone,
// from its own pre-encoded copy. This thread takes the signals: SIGHUP reloads here and clears every
// thread's cache, SIGUSR1 logs the whole process's statistics, SIGTERM stops them all. A thread that
// dies takes the process with it (the nanny starts it again).

import type { Logger } from '../log/log.ts';
import { DnsThreads } from '../dnsthreads/threads.ts';
import { resolveWorkers } from '../dnsthreads/auto.ts';
import type { AutoWorkers, ThreadBudget } from '../dnsthreads/auto.ts';
import type { ThreadStats } from '../dnsthreads/threads.ts';
import type { DnscacheConfig } from './args.ts';
import { addWireStats, DnsCache, threadAnswerCache } from './program.ts';
import type { DnsCacheSnapshot } from './program.ts';

/**
 * --workers=auto's memory bound: dnscache's RSS before its cache fills (55 MiB measured) with the
 * shared store and this thread's answer cache full (--cache-bytes each), and what a thread adds: 20
 * MiB and an answer cache of its own (threadAnswerCache).
 */
export function dnscacheThreadBudget(c: DnscacheConfig): ThreadBudget {
  return { baseBytes: 64 * 2 ** 20 + 2 * c.cacheBytes, perThreadBytes: 20 * 2 ** 20 + c.cacheBytes };
}

/** The thread count --workers asks for (auto: what the process may use), and why. */
export function dnscacheWorkers(c: DnscacheConfig): AutoWorkers {
  return resolveWorkers(c.workers, dnscacheThreadBudget(c));
}

/**
 * `own` (a fresh snapshot: added into) with every other thread's hits and wire counts (the cache's
 * size, insertions and evictions are the shared store's, the owner's already).
 */
export function withThreads(own: DnsCacheSnapshot, threads: readonly ThreadStats[]): DnsCacheSnapshot {
  for (const t of threads) {
    own.counters.hits += t.cache.hits;
    addWireStats(own.wire, t.servers);
  }
  return own;
}

export class DnsCacheThreads {
  /** This thread's DnsCache: binds first, answers every thread's misses. */
  readonly owner: DnsCache;
  private readonly c: DnscacheConfig;
  private readonly log: Logger;
  private threads: DnsThreads | null = null;

  constructor(c: DnscacheConfig, log: Logger) {
    this.c = c;
    this.log = log;
    this.owner = new DnsCache(c, log, { totals: () => this.totals(), threads: c.workers });
  }

  /** Binds here, then starts the other threads on the same addresses and ports; rejects (all stopped) when one cannot. */
  async start(): Promise<{ address: string; port: number }[]> {
    const listening = await this.owner.start();
    const c = this.c;
    const cache = threadAnswerCache(c);
    this.threads = new DnsThreads({
      count: c.workers - 1,
      listen: listening,
      answerCacheBytes: cache.maxBytes,
      answerCacheEntries: cache.maxEntries,
      roundRobin: c.roundRobin,
      handler: this.owner.handler.handle,
      fairness: this.owner.fairness ?? undefined,
      servers: this.owner.servers,
      onCacheHit: c.logQueries ? this.owner.handler.logHit : undefined,
      log: this.log,
    });
    try {
      await this.threads.start();
    } catch (err) {
      await this.owner.stop();
      throw err;
    }
    return listening;
  }

  /** SIGHUP: the files again and the routes here; every thread's cache cleared. */
  reload(): void {
    this.owner.reload();
    this.threads?.invalidate();
  }

  /** SIGUSR1: the statistics lines, the whole process's. */
  async logStatistics(): Promise<void> {
    this.owner.logStatistics(await this.totals());
  }

  /** SIGTERM: every thread drains at once; the forwarder here closes once the others are done. */
  async stop(): Promise<void> {
    await this.owner.stop(this.threads?.stop());
  }

  /** The whole process's counts. */
  async totals(): Promise<DnsCacheSnapshot> {
    return withThreads(this.owner.snapshot(), (await this.threads?.stats()) ?? []);
  }
}
