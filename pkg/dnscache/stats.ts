// dnsmasq's CHAOS TXT statistics (`dig CH TXT hits.bind`), so the sidecar reads dnscache as it reads
// dnsmasq: one TXT string holding the number.

import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Message } from '../dns/message.ts';
import type { AnswerCache } from './cache.ts';

/** The value for a statistics name, or null when the name is not one. */
export function statistic(qname: string, cache: AnswerCache): number | null {
  switch (qname) {
    case 'cachesize.bind':
      return cache.policy.size;
    case 'insertions.bind':
      return cache.stats.insertions;
    case 'evictions.bind':
      return cache.stats.evictions;
    case 'misses.bind':
      return cache.stats.misses;
    case 'hits.bind':
      return cache.stats.hits;
    case 'auth.bind':
      // dnscache has no authoritative zones: always 0, as dnsmasq without --auth-zone.
      return 0;
    default:
      return null;
  }
}

/** The reply to a CHAOS-class query: the statistic, or REFUSED for anything else. */
export function chaosReply(qname: string, qtype: number, cache: AnswerCache): Message {
  const m = emptyMessage();
  m.aa = true;
  const value = qtype === Type.TXT || qtype === Type.ANY ? statistic(qname, cache) : null;
  if (value === null) {
    m.rcode = Rcode.REFUSED;
    return m;
  }
  m.answers.push({ name: qname, type: Type.TXT, class: Class.CH, ttl: 0, data: { texts: [String(value)] } });
  return m;
}
