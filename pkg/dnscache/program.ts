// dnscache as one named object: the forwarder with its routes, loop detection, and one DnsServer per
// listen address sharing one answer cache (hits never reach the handler), started and stopped
// together; reload() (SIGHUP) and logStatistics() (SIGUSR1) as dnsmasq has them.

import { AnswerCache } from '../dns/answer-cache.ts';
import { DnsServer } from '../dns/server.ts';
import { Forwarder, resolvConfNameservers, serverKey } from '../forward/forward.ts';
import type { Upstream } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { readFileSync } from 'node:fs';
import { parseServersFile } from './args.ts';
import type { DnscacheConfig, StubServer } from './args.ts';
import type { CachePolicy } from './cache.ts';
import { CachingHandler } from './handler.ts';
import { LoopDetector } from './loop.ts';
import { inServerOrder, serversBindTexts } from './stats.ts';

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
  private readonly servers: DnsServer[];
  // Set by route(): the default route (what loop detection probes), in dnsmasq's order: --server=ip
  // entries, the resolv file's, the servers file's; and every server in the order dnsmasq lists
  // them in servers.bind: the command line's, the resolv file's, the servers file's.
  private defaults: Upstream[] = [];
  private order: Upstream[] = [];

  constructor(c: DnscacheConfig, log: Logger) {
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
    this.cache = new AnswerCache({ maxEntries: c.cacheSize, maxBytes: c.cacheSize > 0 ? c.cacheBytes : 0 });
    this.handler = new CachingHandler({
      cache: this.cache,
      policy,
      forwarder: this.forwarder,
      log,
      logQueries: c.logQueries,
      loop: this.loop,
      serversBind: () => serversBindTexts(this.forwarder.serverStats(), this.order),
      addSubnet: c.addSubnet,
    });
    const addresses = c.listenAddresses.length > 0 ? c.listenAddresses : ['0.0.0.0'];
    // One cache for every address: a question asked on one is a hit on all.
    const onCacheHit = c.logQueries ? this.handler.logHit : undefined;
    this.servers = addresses.map((address) => new DnsServer({ handler: this.handler.handle, address, port: c.port, answerCache: this.cache, onCacheHit, reusePort: c.reusePort, roundRobin: c.roundRobin }));
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

  /** Stops taking queries, answers those in flight, closes every socket. */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
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
    const wire = { received: 0, malformed: 0, dropped: 0, truncated: 0, tcpIdle: 0, tcpStalled: 0, tcpEvicted: 0 };
    for (const s of this.servers) {
      wire.received += s.stats.queries;
      wire.malformed += s.stats.malformed;
      wire.dropped += s.stats.dropped;
      wire.truncated += s.stats.truncated;
      wire.tcpIdle += s.stats.tcpClosed.idle;
      wire.tcpStalled += s.stats.tcpClosed.stalled;
      wire.tcpEvicted += s.stats.tcpClosed.evicted;
    }
    return wire;
  }

  /** SIGUSR1: a `statistics` line (cache, handler, DnsServer), an `upstream statistics` line, a line per server. */
  logStatistics(): void {
    const { cache, handler, forwarder, c } = this;
    const { insertions, evictions, hits, misses } = handler.counters();
    const counts = { cacheSize: c.cacheSize, entries: cache.size, bytes: cache.bytes, maxBytes: cache.maxBytes, insertions, evictions, hits, misses, expired: cache.stats.expired };
    this.log.info('statistics', { ...counts, ...handler.stats, ...this.status() });
    this.log.info('upstream statistics', { ...forwarder.stats, pending: forwarder.pending, ...this.loop?.stats });
    for (const s of inServerOrder(forwarder.serverStats(), this.order)) {
      const { queries, failed, unanswered } = s;
      this.log.info('server', { server: serverKey(s.server), queries, failed, unanswered, disabled: s.disabled || undefined });
    }
  }

  /** The routes from the command line and the files (a bad servers file line is logged and skipped). */
  private route(): void {
    const c = this.c;
    let file = { servers: [] as Upstream[], stubs: [] as StubServer[], order: [] as Upstream[] };
    if (c.serversFile !== '') {
      try {
        const parsed = parseServersFile(readFileSync(c.serversFile, 'utf8'));
        for (const error of parsed.errors) this.log.warn('servers file', { path: c.serversFile, err: error });
        file = parsed;
      } catch (err) {
        this.log.warn('cannot read servers file', { path: c.serversFile, err });
      }
    }
    const resolv = resolvServers(c, this.log);
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
