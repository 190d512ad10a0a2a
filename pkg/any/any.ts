// CoreDNS's `any` plugin (RFC 8482): an ANY question gets one HINFO record saying ANY is obsolete,
// never the name's every record (an amplification and a walk of the zone); other questions go on.

import type { ChainedHandler } from '../dns/chain.ts';
import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';

/** CoreDNS's TTL for the HINFO: 8482, the RFC's number. */
const TTL = 8482;

export const anyHandler: ChainedHandler = (q, next) => {
  if (q.question.type !== Type.ANY) return next(q);
  const hinfo = { name: q.question.name, type: Type.HINFO, class: Class.IN, ttl: TTL, data: { cpu: 'ANY obsoleted', os: 'See RFC 8482' } };
  // Not kept: its name is the question's as asked, which the cache's key (lowercase) does not tell apart.
  return { message: { ...emptyMessage(), qr: true, ra: true, rcode: Rcode.NOERROR, answers: [hinfo] }, cacheable: false };
};
