// dnscache as a running thing: the forwarder with its routes, loop detection, and one DnsServer per
// listen address sharing one answer cache (hits never reach the handler), all closed together.

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

export interface RunningDnscache {
  /** The bound addresses and ports. */
  listening: { address: string; port: number }[];
  /** The DnsServers' shared cache (--cache-size entries, --cache-bytes). */
  cache: AnswerCache;
  handler: CachingHandler;
  forwarder: Forwarder;
  /** --dns-loop-detect's prober; undefined without the option. */
  loop: LoopDetector | undefined;
  /** SIGHUP: re-reads --servers-file and --resolv-file, sets the routes again, clears the cache. */
  reload(): void;
  /** SIGUSR1: a `statistics` line (cache, handler, DnsServer), an `upstream statistics` line, a line per server. */
  logStatistics(): void;
  /** Stops taking queries, answers those in flight, closes every socket. */
  close(): Promise<void>;
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
    log.warn('cannot read resolv file', { path: c.resolvFile, error: err });
    return [];
  }
}

export async function runDnscache(c: DnscacheConfig, log: Logger): Promise<RunningDnscache> {
  const forwarder = new Forwarder({ maxInFlight: c.dnsForwardMax, log: log.child('forward') });
  const loop = c.dnsLoopDetect ? new LoopDetector(forwarder, log.child('loop')) : undefined;
  // Set by route(): the default route (what loop detection probes), in dnsmasq's order: --server=ip
  // entries, the resolv file's, the servers file's; and every server in the order dnsmasq lists
  // them in servers.bind: the command line's, the resolv file's, the servers file's.
  let defaults: Upstream[] = [];
  let order: Upstream[] = [];
  // A bad servers file line is logged and skipped.
  const route = (): void => {
    let file = { servers: [] as Upstream[], stubs: [] as StubServer[], order: [] as Upstream[] };
    if (c.serversFile !== '') {
      try {
        const parsed = parseServersFile(readFileSync(c.serversFile, 'utf8'));
        for (const error of parsed.errors) log.warn('servers file', { path: c.serversFile, error });
        file = parsed;
      } catch (err) {
        log.warn('cannot read servers file', { path: c.serversFile, error: err });
      }
    }
    const resolv = resolvServers(c, log);
    defaults = [...c.servers, ...resolv, ...file.servers];
    forwarder.setUpstreams(defaults);
    forwarder.setStubDomains(stubMap([...c.stubs, ...file.stubs]));
    const commandLine = c.serverOrder ?? [...c.stubs.map((s) => s.server), ...c.servers];
    order = [...commandLine, ...resolv, ...file.order];
  };
  // Probes after every (re)load, once the listeners are up (a probe may come straight back to us).
  const probe = (): void => {
    loop?.probe(defaults).catch((err: unknown) => log.warn('loop probes failed', { error: err }));
  };
  route();
  const policy: CachePolicy = {
    size: c.cacheBytes > 0 ? c.cacheSize : 0,
    noNegcache: c.noNegcache,
    negTtl: c.negTtl,
    minCacheTtl: c.minCacheTtl,
    maxCacheTtl: c.maxCacheTtl,
  };
  const cache = new AnswerCache({ maxEntries: c.cacheSize, maxBytes: c.cacheSize > 0 ? c.cacheBytes : 0 });
  const handler = new CachingHandler({
    cache,
    policy,
    forwarder,
    log,
    logQueries: c.logQueries,
    loop,
    serversBind: () => serversBindTexts(forwarder.serverStats(), order),
  });
  const addresses = c.listenAddresses.length > 0 ? c.listenAddresses : ['0.0.0.0'];
  // One cache for every address: a question asked on one is a hit on all.
  const onCacheHit = c.logQueries ? handler.logHit : undefined;
  const servers = addresses.map((address) => new DnsServer({ handler: handler.handle, address, port: c.port, answerCache: cache, onCacheHit, reusePort: c.reusePort }));
  const listening: { address: string; port: number }[] = [];
  try {
    for (const s of servers) listening.push(await s.listen());
  } catch (err) {
    await Promise.all(servers.map((s) => s.close(0)));
    await forwarder.close();
    throw err;
  }
  probe();
  return {
    listening,
    cache,
    handler,
    forwarder,
    loop,
    reload() {
      route();
      // Answers forwarded before this are not stored either (the cache's generation check).
      cache.clear();
      handler.forgetInflight();
      log.info('reloaded', { serversFile: c.serversFile || undefined, resolvFile: c.noResolv ? undefined : c.resolvFile });
      probe();
    },
    logStatistics() {
      // The DnsServers' counters, summed over the listen addresses: queries received, and those
      // dropped or answered FORMERR as garbled (malformed), dropped unanswered (dropped), cut (truncated).
      // TCP connections it closed: idle, stalled (a frame unfinished in time), evicted (room made at the cap).
      const wire = { received: 0, malformed: 0, dropped: 0, truncated: 0, tcpIdle: 0, tcpStalled: 0, tcpEvicted: 0 };
      for (const s of servers) {
        wire.received += s.stats.queries;
        wire.malformed += s.stats.malformed;
        wire.dropped += s.stats.dropped;
        wire.truncated += s.stats.truncated;
        wire.tcpIdle += s.stats.tcpClosed.idle;
        wire.tcpStalled += s.stats.tcpClosed.stalled;
        wire.tcpEvicted += s.stats.tcpClosed.evicted;
      }
      const { insertions, evictions, hits, misses } = handler.counters();
      const counts = { cacheSize: c.cacheSize, entries: cache.size, bytes: cache.bytes, maxBytes: cache.maxBytes, insertions, evictions, hits, misses, expired: cache.stats.expired };
      log.info('statistics', { ...counts, ...handler.stats, ...wire });
      log.info('upstream statistics', { ...forwarder.stats, pending: forwarder.pending, ...loop?.stats });
      for (const s of inServerOrder(forwarder.serverStats(), order)) {
        const { queries, failed, unanswered } = s;
        log.info('server', { server: serverKey(s.server), queries, failed, unanswered, disabled: s.disabled || undefined });
      }
    },
    async close() {
      await Promise.all(servers.map((s) => s.close()));
      await forwarder.close();
    },
  };
}
