// dnscache as a running thing: the forwarder with its routes, the cache, and one DnsServer per
// listen address, all closed together.

import { DnsServer } from '../dns/server.ts';
import { Forwarder, resolvConfNameservers } from '../forward/forward.ts';
import type { Upstream } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import type { DnscacheConfig } from './args.ts';
import { AnswerCache } from './cache.ts';
import { CachingHandler } from './handler.ts';

export interface RunningDnscache {
  /** The bound addresses and ports. */
  listening: { address: string; port: number }[];
  cache: AnswerCache;
  handler: CachingHandler;
  forwarder: Forwarder;
  /** Stops taking queries, answers those in flight, closes every socket. */
  close(): Promise<void>;
}

/** --server=/domain/... entries as the forwarder's stub map, servers in the order given. */
export function stubMap(c: DnscacheConfig): Map<string, Upstream[]> {
  const stubs = new Map<string, Upstream[]>();
  for (const { domain, server } of c.stubs) {
    const list = stubs.get(domain) ?? [];
    list.push(server);
    stubs.set(domain, list);
  }
  return stubs;
}

/** The default route: --server=ip entries, then the resolv file's unless --no-resolv. */
export function defaultUpstreams(c: DnscacheConfig, log: Logger): Upstream[] {
  const servers = [...c.servers];
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
  forwarder.setUpstreams(defaultUpstreams(c, log));
  forwarder.setStubDomains(stubMap(c));
  const cache = new AnswerCache({
    size: c.cacheSize,
    noNegcache: c.noNegcache,
    negTtl: c.negTtl,
    minCacheTtl: c.minCacheTtl,
    maxCacheTtl: c.maxCacheTtl,
  });
  const handler = new CachingHandler({ cache, forwarder, log });
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
    async close() {
      await Promise.all(servers.map((s) => s.close()));
      await forwarder.close();
    },
  };
}
