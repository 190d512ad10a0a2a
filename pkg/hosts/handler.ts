// Answers from a hosts table as CoreDNS's hosts plugin does: a name of its zones answers its A or
// AAAA records (NODATA for another type, or for a family it has no address of), authoritative; an
// address it knows answers PTR; a name it does not hold goes on to the next plugin under `fallthrough`
// and is SERVFAIL without (CoreDNS's choice: a hosts file has no SOA to deny a name with). Names
// outside its zones, and PTRs it cannot answer, always go on.

import { inZone } from '../dns/names.ts';
import { Class, Rcode, Type } from '../dns/constants.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import type { Answer } from '../dns/server.ts';
import type { ResourceRecord } from '../dns/message.ts';
import { emptyMessage } from '../dns/message.ts';
import { ipFromReverseName } from '../cluster/ip.ts';
import type { HostsTable } from './table.ts';

export interface HostsAnswering {
  /** The zones it answers (canonical; '' is every name). */
  zones: readonly string[];
  ttl: number;
  /** `fallthrough`: the zones whose names it does not hold go on ('' is every zone); empty: none. */
  fallthrough: readonly string[];
}

const within = (zones: readonly string[], qname: string) => zones.some((z) => inZone(z, qname));

function reply(rcode: number, answers: ResourceRecord[] = []): Answer {
  // Not kept by the DNS server's cache: the file may change under it.
  return { message: { ...emptyMessage(), qr: true, aa: rcode === Rcode.NOERROR, ra: true, rcode, answers }, cacheable: false };
}

export function hostsHandler(table: HostsTable, o: HostsAnswering): ChainedHandler {
  return (q, next) => {
    const type = q.question.type;
    if (type === Type.PTR) {
      const ip = ipFromReverseName(q.qname);
      const names = ip === null ? [] : table.names(ip);
      if (names.length === 0) return next(q);
      return reply(Rcode.NOERROR, names.map((target) => ({ name: q.qname, type: Type.PTR, class: Class.IN, ttl: o.ttl, data: { target } })));
    }
    if (!within(o.zones, q.qname)) return next(q);
    const found = table.lookup(q.qname);
    if (found === null) return within(o.fallthrough, q.qname) ? next(q) : reply(Rcode.SERVFAIL);
    const answers: ResourceRecord[] = [];
    if (type === Type.A) for (const address of found.v4) answers.push({ name: q.qname, type: Type.A, class: Class.IN, ttl: o.ttl, data: { address } });
    if (type === Type.AAAA) for (const address of found.v6) answers.push({ name: q.qname, type: Type.AAAA, class: Class.IN, ttl: o.ttl, data: { address } });
    return reply(Rcode.NOERROR, answers);
  };
}
