// CoreDNS's cache sits before the plugins that answer from what they hold (template, hosts) and caps
// their replies' TTLs as they pass: every record of a reply gets the reply's least TTL (for NXDOMAIN
// and NODATA the SOA's MINIMUM too), raised to the cache's MINTTL (5 s) and capped at its success or
// denial TTL (plugin/cache WriteMsg, computeTTL, dnsutil.MinimalTTL), for the names the cache sees (its
// zones; `disable` keeps a reply out of it but caps it all the same). A chained handler that does the same to what a handler answers.

import type { ChainedHandler } from '../dns/chain.ts';
import { Rcode, Type } from '../dns/constants.ts';
import type { Message, ResourceRecord, SoaData } from '../dns/message.ts';
import type { Answer, Handler } from '../dns/server.ts';
import { seesName } from '../dnscache/cache.ts';
import { cachePolicy } from './plugins/cache.ts';
import type { CacheOptions } from './plugins/cache.ts';

/** `m` with every record's TTL as the cache leaves it: new records, the handler's own untouched. */
function capTtls(m: Message, cache: CacheOptions): Message {
  const records: ResourceRecord[] = [...m.answers, ...m.authorities, ...m.additionals];
  if (records.length === 0) return m;
  const soa = m.authorities.find((rr) => rr.type === Type.SOA);
  const denial = m.rcode === Rcode.NXDOMAIN || (m.rcode === Rcode.NOERROR && m.answers.length === 0 && soa !== undefined);
  let least = Math.min(...records.map((rr) => rr.ttl));
  if (denial && soa !== undefined) least = Math.min(least, (soa.data as SoaData).minimum);
  const [min, max] = denial ? [cache.denialMinTtl, cache.denialTtl] : [cache.successMinTtl, cache.successTtl];
  const ttl = Math.min(Math.max(least, min), max);
  const each = (rrs: ResourceRecord[]) => rrs.map((rr) => (rr.ttl === ttl ? rr : { ...rr, ttl }));
  return { ...m, answers: each(m.answers), authorities: each(m.authorities), additionals: each(m.additionals) };
}

/**
 * `handler`'s replies with their TTLs as CoreDNS's cache before it would leave them. What it passes
 * on unchanged (`next`'s own reply: the cluster, forward) is left as it is: those keep their own
 * TTLs (the cluster zone's cache is disabled in kubeadm's Corefile; forwarded replies are capped by
 * the resolver's policy).
 */
export function cachedAfter(handler: ChainedHandler, cache: CacheOptions): ChainedHandler {
  const seen = cachePolicy(cache);
  return (q, next) => {
    // A name outside the cache's zones passes it untouched; `disable` keeps a reply out but caps it all the same.
    if (!seesName(seen, q.qname)) return handler(q, next);
    let fromNext: Answer | null | undefined;
    const onward: Handler = (asked) => {
      const r = next(asked);
      if (r instanceof Promise) return r.then((v) => (fromNext = v));
      return (fromNext = r);
    };
    const cap = (x: Answer | null): Answer | null => (x === null || x === fromNext || x.message === undefined ? x : { ...x, message: capTtls(x.message, cache) });
    const a = handler(q, onward);
    return a instanceof Promise ? a.then(cap) : cap(a);
  };
}
