// dnscache as a running thing: the forwarder with its routes, the cache, and one DnsServer per
// listen address, all closed together.

import { DnsServer } from '../dns/server.ts';
import { Forwarder, resolvConfNameservers } from '../forward/forward.ts';
import type { Upstream } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { readFileSync } from 'node:fs';
import { parseServersFile } from './args.ts';
import type { DnscacheConfig, StubServer } from './args.ts';
import { AnswerCache } from './cache.ts';
import { CachingHandler } from './handler.ts';

export interface RunningDnscache {
  /** The bound addresses and ports. */
  listening: { address: string; port: number }[];
  cache: AnswerCache;
  handler: CachingHandler;
  forwarder: Forwarder;
  /** SIGHUP: re-reads --servers-file and --resolv-file, sets the routes again, clears the cache. */
  reload(): void;
  /** SIGUSR1: one log line with the cache and forwarding counters. */
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

/** The default route: --server=ip entries, then the resolv file's unless --no-resolv. */
export function defaultUpstreams(c: DnscacheConfig, fromFile: readonly Upstream[], log: Logger): Upstream[] {
  const servers = [...c.servers, ...fromFile];
  if (!c.noResolv) {
    try {
      servers.push(...resolvConfNameservers(c.resolvFile));
    } catch (err) {
      log.warn('cannot read resolv file', { path: c.resolvFile, error: err });
    }
  }
  return servers;
}

export async function runDnscache(c: DnscacheConfig, log: Logger): Promise<RunningDnscache> {
  const forwarder = new Forwarder({ maxInFlight: c.dnsForwardMax, log: log.child('forward') });
  // The command line's servers first, then the servers file's; a bad file line is logged and skipped.
  const route = (): void => {
    let file = { servers: [] as Upstream[], stubs: [] as StubServer[] };
    if (c.serversFile !== '') {
      try {
        const parsed = parseServersFile(readFileSync(c.serversFile, 'utf8'));
        for (const error of parsed.errors) log.warn('servers file', { path: c.serversFile, error });
        file = parsed;
      } catch (err) {
        log.warn('cannot read servers file', { path: c.serversFile, error: err });
      }
    }
    forwarder.setUpstreams(defaultUpstreams(c, file.servers, log));
    forwarder.setStubDomains(stubMap([...c.stubs, ...file.stubs]));
  };
  route();
  if (c.dnsLoopDetect) log.warn('--dns-loop-detect is accepted but not implemented yet');
  const cache = new AnswerCache({
    size: c.cacheSize,
    noNegcache: c.noNegcache,
    negTtl: c.negTtl,
    minCacheTtl: c.minCacheTtl,
    maxCacheTtl: c.maxCacheTtl,
  });
  const handler = new CachingHandler({ cache, forwarder, log, logQueries: c.logQueries });
  const addresses = c.listenAddresses.length > 0 ? c.listenAddresses : ['0.0.0.0'];
  // The server's own answer cache knows nothing of TTLs: dnscache's cache replaces it.
  const servers = addresses.map((address) => new DnsServer({ handler: handler.handle, address, port: c.port, answerCacheSize: 0 }));
  const listening: { address: string; port: number }[] = [];
  try {
    for (const s of servers) listening.push(await s.listen());
  } catch (err) {
    await Promise.all(servers.map((s) => s.close(0)));
    await forwarder.close();
    throw err;
  }
  return {
    listening,
    cache,
    handler,
    forwarder,
    reload() {
      route();
      cache.clear();
      log.info('reloaded', { serversFile: c.serversFile || undefined, resolvFile: c.noResolv ? undefined : c.resolvFile });
    },
    logStatistics() {
      log.info('statistics', { cacheSize: c.cacheSize, entries: cache.size, ...cache.stats, ...handler.stats, ...forwarder.stats });
    },
    async close() {
      await Promise.all(servers.map((s) => s.close()));
      await forwarder.close();
    },
  };
}
