// dnsmasq's CHAOS TXT statistics (`dig CH TXT hits.bind`), so the sidecar reads dnscache as it reads
// dnsmasq: one TXT string holding the number.

import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Message } from '../dns/message.ts';
import { normalizeUpstream, serverKey } from '../forward/forward.ts';
import type { ServerStats, Upstream } from '../forward/forward.ts';

/** dnsmasq's cache statistics, under their CHAOS names. */
export interface CacheCounters {
  /** --cache-size. */
  cachesize: number;
  insertions: number;
  /** Live entries pushed out to make room (not expiries). */
  evictions: number;
  /** Answers served from the cache. */
  hits: number;
  /** Questions not answered from the cache (CHAOS queries and returning loop probes not counted). */
  misses: number;
}

/**
 * servers.bind's strings, as dnsmasq 2.90 answers: one `ip#port queries failed` per address, counts
 * summed over every route naming it, listed in `order` (the order the servers were configured), any
 * address missing from `order` after those.
 */
export function serversBindTexts(stats: readonly ServerStats[], order: readonly Upstream[]): string[] {
  return inServerOrder(stats, order).map((s) => `${serverKey(s.server)} ${s.queries} ${s.failed}`);
}

/** `stats` in the order their addresses first appear in `order`; addresses not in it come last. */
export function inServerOrder(stats: readonly ServerStats[], order: readonly Upstream[]): ServerStats[] {
  const byName = new Map<string, ServerStats>();
  for (const s of stats) byName.set(serverKey(s.server), s);
  const out: ServerStats[] = [];
  for (const u of order) {
    const name = serverKey(normalizeUpstream(u)); // the forwarder's form (IPv6 compressed)
    const s = byName.get(name);
    if (s === undefined) continue;
    byName.delete(name);
    out.push(s);
  }
  out.push(...byName.values());
  return out;
}

/** The value for a statistics name, or null when the name is not one. */
export function statistic(qname: string, c: CacheCounters): number | null {
  switch (qname) {
    case 'cachesize.bind':
      return c.cachesize;
    case 'insertions.bind':
      return c.insertions;
    case 'evictions.bind':
      return c.evictions;
    case 'misses.bind':
      return c.misses;
    case 'hits.bind':
      return c.hits;
    case 'auth.bind':
      // dnscache has no authoritative zones: always 0, as dnsmasq without --auth-zone.
      return 0;
    default:
      return null;
  }
}

/**
 * The reply to a CHAOS-class query: the statistic, servers.bind (one TXT record, one string per
 * server, from `servers`; none configured: no record), or REFUSED for anything else.
 */
export function chaosReply(qname: string, qtype: number, counters: CacheCounters, servers?: () => string[]): Message {
  const m = emptyMessage();
  m.aa = true;
  m.ra = true; // as dnsmasq's
  const txt = qtype === Type.TXT || qtype === Type.ANY;
  if (txt && qname === 'servers.bind' && servers !== undefined) {
    // dnsmasq sends a malformed record when there are no servers; an empty answer says the same.
    const texts = servers();
    if (texts.length > 0) m.answers.push({ name: qname, type: Type.TXT, class: Class.CH, ttl: 0, data: { texts } });
    return m;
  }
  const value = txt ? statistic(qname, counters) : null;
  if (value === null) {
    m.rcode = Rcode.REFUSED;
    return m;
  }
  m.answers.push({ name: qname, type: Type.TXT, class: Class.CH, ttl: 0, data: { texts: [String(value)] } });
  return m;
}
