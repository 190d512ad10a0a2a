// dnscache as one named object: the forwarder with its routes, loop detection, and one DnsServer per
// listen address sharing one answer cache (hits never reach the handler), started and stopped
// together; reload() (SIGHUP) and logStatistics() (SIGUSR1) as dnsmasq has them.

import { AnswerCache } from '../dns/answer-cache.ts';
import { DnsServer } from '../dns/server.ts';
import { tcpConnectionsShare } from '../dnsthreads/threads.ts';
import type { ServerStats as DnsServerStats } from '../dns/server.ts';
import { Forwarder, resolvConfNameservers, serverKey } from '../forward/forward.ts';
import type { Upstream } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import type { Fairness } from '../dns/fairness.ts';
import { fairShare } from '../fairshare/fairshare.ts';
import { fairShareSettings } from '../flags/fairness.ts';
const { readFileSync } = process.getBuiltinModule('node:fs');
import { parseServersFile } from './args.ts';
import type { DnscacheConfig, StubServer } from './args.ts';
import type { CachePolicy } from './cache.ts';
import { CachingHandler } from './handler.ts';
import type { HandlerStats } from './handler.ts';
import { LoopDetector } from './loop.ts';
import { inServerOrder, serversBindTexts } from './stats.ts';
import type { CacheCounters } from './stats.ts';
import type { ForwarderStats, ServerStats } from '../forward/forward.ts';

/**
 * Received: queries; malformed: dropped or answered FORMERR as garbled; dropped: unanswered;
 * truncated: cut; TCP connections closed: idle, stalled (a frame unfinished in time), evicted (room made at the cap).
 */
export interface DnsCacheWireStats {
  received: number;
  malformed: number;
  dropped: number;
  truncated: number;
  tcpIdle: number;
  tcpStalled: number;
  tcpEvicted: number;
}

/** What one DnsCache counted: the CHAOS statistics, the SIGUSR1 lines. Plain data (posted between threads). */
export interface DnsCacheSnapshot {
  counters: CacheCounters;
  cache: { entries: number; bytes: number; maxBytes: number; expired: number };
  handler: HandlerStats;
  wire: DnsCacheWireStats;
  forwarder: ForwarderStats & { pending: number };
  loop: { probes: number; loops: number } | undefined;
  servers: ServerStats[];
}

export interface DnsCacheOptions {
  /**
   * The whole process's counts (--workers: every thread's summed), for the CHAOS statistics; without
   * it, this DnsCache's own.
   */
  totals?: () => Promise<DnsCacheSnapshot>;
  /**
   * --workers: this DnsCache answers every thread's misses (threads.ts) and keeps the shared store
   * (CachingHandler's sharedStore, --cache-bytes); its own pre-encoded cache is as each thread's
   * (threadAnswerCache).
   */
  threads?: number;
}

/**
 * One thread's pre-encoded answer cache: --cache-size entries within --cache-bytes, every thread alike.
 * Not a share: SO_REUSEPORT spreads clients over the threads, not names, so each thread meets the whole
 * working set, and a share smaller than it sends every answer through this thread (bench:scale at 8
 * threads: 1.06x one thread's QPS with an eighth of --cache-size each, for 2,000 names).
 */
export function threadAnswerCache(c: DnscacheConfig): { maxEntries: number; maxBytes: number } {
  return { maxEntries: c.cacheSize, maxBytes: c.cacheSize > 0 ? c.cacheBytes : 0 };
}

export function emptyWireStats(): DnsCacheWireStats {
  return { received: 0, malformed: 0, dropped: 0, truncated: 0, tcpIdle: 0, tcpStalled: 0, tcpEvicted: 0 };
}

/** DnsServers' counters (this thread's, or another's: --workers) added into `wire`. */
export function addWireStats(wire: DnsCacheWireStats, servers: readonly DnsServerStats[]): DnsCacheWireStats {
  for (const s of servers) {
    wire.received += s.queries;
    wire.malformed += s.malformed;
    wire.dropped += s.dropped;
    wire.truncated += s.truncated;
    wire.tcpIdle += s.tcpClosed.idle;
    wire.tcpStalled += s.tcpClosed.stalled;
    wire.tcpEvicted += s.tcpClosed.evicted;
  }
  return wire;
}

/** --server=/domain/... entries as the forwarder's stub map, servers in the order given. */
export function stubMap(entries: readonly StubServer[]): Map<string, Upstream[]> {
  const stubs = new Map<string, Upstream[]>();
  for (const { domain, server } of entries) {
    const list = stubs.get(domain) ?? [];
    list.push(server);
    stubs.set(domain, list);
  }
  return stubs;
}

/** The resolv file's nameservers, none with --no-resolv or when it cannot be read (logged). */
function resolvServers(c: DnscacheConfig, log: Logger): Upstream[] {
  if (c.noResolv) return [];
  try {
    return resolvConfNameservers(c.resolvFile);
  } catch (err) {
    log.warn('cannot read resolv file', { path: c.resolvFile, err });
    return [];
  }
}

export class DnsCache {
  /** The DnsServers' shared cache (--cache-size entries, --cache-bytes). */
  readonly cache: AnswerCache;
  readonly handler: CachingHandler;
  readonly forwarder: Forwarder;
  /** --dns-loop-detect's prober; undefined without the option. */
  readonly loop: LoopDetector | undefined;
  private readonly c: DnscacheConfig;
  private readonly log: Logger;
  /** One per listen address, in the order start() binds them. */
  readonly servers: DnsServer[];
  /** Misses shared between askers while this thread is busy (every thread's misses are answered here); null: never. */
  readonly fairness: Fairness | null;
  // Set by route(): the default route (what loop detection probes), in dnsmasq's order: --server=ip
  // entries, the resolv file's, the servers file's; and every server in the order dnsmasq lists
  // them in servers.bind: the command line's, the resolv file's, the servers file's.
  private defaults: Upstream[] = [];
  private order: Upstream[] = [];

  constructor(c: DnscacheConfig, log: Logger, opts: DnsCacheOptions = {}) {
    this.c = c;
    this.log = log;
    this.forwarder = new Forwarder({ maxInFlight: c.dnsForwardMax, log: log.child('forward') });
    this.loop = c.dnsLoopDetect ? new LoopDetector(this.forwarder, log.child('loop')) : undefined;
    this.route();
    const policy: CachePolicy = {
      size: c.cacheBytes > 0 ? c.cacheSize : 0,
      noNegcache: c.noNegcache,
      negTtl: c.negTtl,
      minCacheTtl: c.minCacheTtl,
      maxCacheTtl: c.maxCacheTtl,
      staleS: c.staleS,
    };
    this.cache = new AnswerCache(threadAnswerCache(c));
    this.handler = new CachingHandler({
      cache: this.cache,
      policy,
      forwarder: this.forwarder,
      log,
      logQueries: c.logQueries,
      loop: this.loop,
      serversBind: () => serversBindTexts(this.forwarder.serverStats(), this.order),
      addSubnet: c.addSubnet,
      statistics: opts.totals && (async () => this.statistics(await opts.totals!())),
      sharedStore: opts.threads !== undefined ? { maxBytes: c.cacheBytes } : undefined,
    });
    const addresses = listenAddresses(c);
    // One cache for every address: a question asked on one is a hit on all.
    const onCacheHit = c.logQueries ? this.handler.logHit : undefined;
    // The forwarder's slots are shared too, once half of them are taken.
    this.fairness = fairShare({ settings: fairShareSettings(c.fairShareBusy, c.fairShareFloor), log, slots: Math.ceil(c.dnsForwardMax / 2) });
    const fairness = this.fairness ?? undefined;
    // SO_REUSEPORT on the port: for --workers' threads, fair shares' steered flows (pkg/dns
    // udp-steer.ts), and --reuse-port (which joins a port another dnscache serves).
    const sharesPort = c.reusePort || (opts.threads ?? 1) > 1 || fairness !== undefined;
    this.servers = addresses.map((address) => new DnsServer({ handler: this.handler.handle, address, port: c.port, answerCache: this.cache, onCacheHit, reusePort: sharesPort, joinsPort: c.reusePort, roundRobin: c.roundRobin, maxTcpConnections: tcpConnectionsShare(opts.threads ?? 1), fairness }));
  }

  /** Binds every listen address (one taken: all closed, rejects); the addresses and ports bound. */
  async start(): Promise<{ address: string; port: number }[]> {
    const listening: { address: string; port: number }[] = [];
    try {
      for (const s of this.servers) listening.push(await s.listen());
    } catch (err) {
      await Promise.all(this.servers.map((s) => s.close(0)));
      await this.forwarder.close();
      throw err;
    }
    this.probe();
    return listening;
  }

  /**
   * Stops taking queries, answers those in flight, closes every socket; the forwarder's last, once
   * `othersDone` too (the other threads' misses come here while they drain).
   */
  async stop(othersDone?: Promise<unknown>): Promise<void> {
    await Promise.all([...this.servers.map((s) => s.close()), othersDone]);
    this.fairness?.close();
    await this.forwarder.close();
  }

  /** SIGHUP: re-reads --servers-file and --resolv-file, sets the routes again, clears the cache. */
  reload(): void {
    this.route();
    // Answers forwarded before this are not stored either (the cache's generation check).
    this.cache.clear();
    this.handler.forgetInflight();
    this.log.info('reloaded', { serversFile: this.c.serversFile || undefined, resolvFile: this.c.noResolv ? undefined : this.c.resolvFile });
    this.probe();
  }

  /** The DnsServers' counters, summed over the listen addresses. */
  status(): DnsCacheWireStats {
    return addWireStats(emptyWireStats(), this.servers.map((s) => s.stats));
  }

  /** What this DnsCache counted so far. */
  snapshot(): DnsCacheSnapshot {
    const { cache, handler, forwarder } = this;
    return {
      counters: handler.counters(),
      // --workers: the process's one logical cache is the shared store.
      cache: this.sharedCache() ?? { entries: cache.size, bytes: cache.bytes, maxBytes: cache.maxBytes, expired: cache.stats.expired },
      handler: { ...handler.stats },
      wire: this.status(),
      forwarder: { ...forwarder.stats, pending: forwarder.pending },
      loop: this.loop === undefined ? undefined : { ...this.loop.stats },
      servers: forwarder.serverStats().map((s) => ({ ...s, server: { host: s.server.host, port: s.server.port } })),
    };
  }

  /**
   * SIGUSR1: a `statistics` line (cache, handler, DnsServer), an `upstream statistics` line, a line
   * per server; of `s` (--workers: the whole process's), else of this DnsCache.
   */
  logStatistics(s: DnsCacheSnapshot = this.snapshot()): void {
    const { insertions, evictions, hits, misses } = s.counters;
    const { entries, bytes, maxBytes, expired } = s.cache;
    const counts = { cacheSize: s.counters.cachesize, entries, bytes, maxBytes, insertions, evictions, hits, misses, expired };
    this.log.info('statistics', { ...counts, ...s.handler, ...s.wire });
    this.log.info('upstream statistics', { ...s.forwarder, ...s.loop });
    for (const server of inServerOrder(s.servers, this.order)) {
      const { queries, failed, unanswered } = server;
      this.log.info('server', { server: serverKey(server.server), queries, failed, unanswered, disabled: server.disabled || undefined });
    }
  }

  private sharedCache(): DnsCacheSnapshot['cache'] | null {
    const s = this.handler.sharedStoreStats();
    return s === null ? null : { entries: s.entries, bytes: s.bytes, maxBytes: this.c.cacheSize > 0 ? this.c.cacheBytes : 0, expired: s.expired };
  }

  /** The CHAOS statistics of `s`: its counters, and servers.bind's strings in this DnsCache's order. */
  private statistics(s: DnsCacheSnapshot): { counters: CacheCounters; servers: string[] } {
    return { counters: s.counters, servers: serversBindTexts(s.servers, this.order) };
  }

  /** The routes from the command line and the files (a bad servers file line is logged and skipped; its `no-resolv` line leaves the resolv file out). */
  private route(): void {
    const c = this.c;
    let file = { servers: [] as Upstream[], stubs: [] as StubServer[], order: [] as Upstream[], noResolv: false };
    if (c.serversFile !== '') {
      try {
        const parsed = parseServersFile(readFileSync(c.serversFile, 'utf8'));
        for (const error of parsed.errors) this.log.warn('servers file', { path: c.serversFile, err: error });
        file = parsed;
      } catch (err) {
        this.log.warn('cannot read servers file', { path: c.serversFile, err });
      }
    }
    const resolv = file.noResolv ? [] : resolvServers(c, this.log);
    this.defaults = [...c.servers, ...resolv, ...file.servers];
    this.forwarder.setUpstreams(this.defaults);
    this.forwarder.setStubDomains(stubMap([...c.stubs, ...file.stubs]));
    const commandLine = c.serverOrder ?? [...c.stubs.map((s) => s.server), ...c.servers];
    this.order = [...commandLine, ...resolv, ...file.order];
  }

  /** Loop probes after every (re)load, once the listeners are up (a probe may come straight back to us). */
  private probe(): void {
    this.loop?.probe(this.defaults).catch((err: unknown) => this.log.warn('loop probes failed', { err }));
  }
}

/** The addresses dnscache listens on: --listen-address, else every IPv4 address. */
export function listenAddresses(c: Pick<DnscacheConfig, 'listenAddresses'>): string[] {
  return c.listenAddresses.length > 0 ? c.listenAddresses : ['0.0.0.0'];
}
