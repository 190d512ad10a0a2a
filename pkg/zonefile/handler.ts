// CoreDNS's file plugin as a chained handler: the zones it loaded answer their names (a CNAME target
// outside them asked of what comes after, its records appended); a name of no zone goes on, as do,
// under `fallthrough`, names the zone holds nothing for. The file is read again every `reload`
// interval and served anew when its SOA serial changed; one that no longer reads keeps the last good
// one in service, logged.

import { inZone } from '../dns/names.ts';
const { readFileSync } = process.getBuiltinModule('node:fs');
import { messageOf } from '../dns/chain.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import { encodeMessage } from '../dns/codec.ts';
import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Message } from '../dns/message.ts';
import { queryOf } from '../dns/server.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import type { Logger } from '../log/log.ts';
import { parseZoneFile } from './parse.ts';
import { ZoneData } from './zone.ts';
import type { ZoneAnswer } from './zone.ts';

export interface ZoneFileOptions {
  file: string;
  /** Canonical zones ('' the root): the file is read once per zone, as its origin. */
  zones: string[];
  /** ms; 0: read once. */
  reloadMs: number;
  /** Zones whose names the file holds nothing for go on ('' every zone); empty: none. */
  fallthrough: string[];
}


/** The zones of one `file` line, loaded; throws at start when the file does not read. */
export class ZoneFiles {
  private zones: ZoneData[];
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly o: ZoneFileOptions;
  private readonly log: Logger;

  constructor(o: ZoneFileOptions, log: Logger) {
    this.o = o;
    this.log = log;
    this.zones = this.read();
    if (o.reloadMs > 0) {
      this.timer = setInterval(() => this.reload(), o.reloadMs);
      this.timer.unref();
    }
  }

  /** Longest origin first: zoneOf takes the first that holds a name. */
  private read(): ZoneData[] {
    const text = readFileSync(this.o.file, 'utf8');
    return this.o.zones.map((z) => new ZoneData(z, parseZoneFile(text, z))).sort((a, b) => b.origin.length - a.origin.length);
  }

  private reload(): void {
    try {
      const next = this.read();
      if (next.every((z, i) => z.serial === this.zones[i].serial)) return;
      this.zones = next;
      this.log.info('zone file reloaded', { file: this.o.file, serial: next[0]?.serial });
    } catch (err) {
      this.log.error('zone file not reloaded: the last one serves on', { file: this.o.file, problem: (err as Error).message });
    }
  }

  /** The zone holding `qname` (the longest), or undefined. */
  zoneOf(qname: string): ZoneData | undefined {
    return this.zones.find((z) => z.contains(qname));
  }

  close(): void {
    clearInterval(this.timer);
  }
}

function reply(a: ZoneAnswer): Message {
  return { ...emptyMessage(), qr: true, aa: a.aa, ra: true, rcode: a.rcode, answers: a.answers, authorities: a.authorities, additionals: a.additionals };
}

/** A CNAME's target outside the zone asked of `next`, its records appended (CoreDNS's file asks its own server). */
async function outside(m: Message, target: string, q: Query, next: Handler): Promise<Answer> {
  const asked = { ...q.message, questions: [{ name: target, type: q.question.type, class: Class.IN }] };
  const up = messageOf(await next(queryOf(asked, encodeMessage(asked).bytes, q.transport, q.remoteAddress, q.remotePort, q.clientSubnet, q.prefetch)));
  if (up !== undefined) {
    m.answers.push(...up.answers);
    m.rcode = up.rcode === Rcode.NXDOMAIN ? Rcode.NXDOMAIN : m.rcode;
  }
  return { message: m, cacheable: false };
}

export function zoneFileHandler(files: ZoneFiles, o: Pick<ZoneFileOptions, 'fallthrough'>): ChainedHandler {
  return (q, next) => {
    const zone = files.zoneOf(q.qname);
    if (zone === undefined) return next(q);
    const qtype = q.question.type;
    if (qtype === Type.AXFR || qtype === Type.IXFR) return { message: { ...emptyMessage(), qr: true, ra: true, rcode: Rcode.REFUSED } };
    const a = zone.lookup(q.qname, qtype);
    if (a.nothing && o.fallthrough.some((z) => inZone(z, q.qname))) return next(q);
    // Not kept by the DNS server's cache: a reload may change the zone under it.
    if (a.outside !== null) return outside(reply(a), a.outside, q, next);
    return { message: reply(a), cacheable: false };
  };
}
