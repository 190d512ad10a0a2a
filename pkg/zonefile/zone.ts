// A zone file's records, answered as CoreDNS's file plugin answers them (plugin/file lookup.go, no
// DNSSEC): the apex's SOA and NS; a name's records with the apex NS in the authority and the in-zone
// addresses of what they name in the additional section; a CNAME followed within the zone (8 at
// most), or handed back for its target outside; a delegation (NS below the apex) as a referral with
// glue; wildcards; NODATA and NXDOMAIN with the SOA, an empty non-terminal NOERROR.

import { inZone } from '../dns/names.ts';
import { Rcode, Type } from '../dns/constants.ts';
import type { ResourceRecord, SoaData } from '../dns/message.ts';

export interface ZoneAnswer {
  rcode: number;
  /** Authoritative (a referral is not). */
  aa: boolean;
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
  /** A CNAME target outside the zone, for whoever answers next; null when none. */
  outside: string | null;
  /** Nothing held for the name at all (NXDOMAIN, or an empty non-terminal): what `fallthrough` hands on. */
  nothing: boolean;
}

const MAX_CHAIN = 8;
const parent = (name: string) => (name.includes('.') ? name.slice(name.indexOf('.') + 1) : '');

export class ZoneData {
  readonly origin: string;
  readonly serial: number;
  private readonly names = new Map<string, ResourceRecord[]>();
  /** Every name that is an owner or lies between one and the apex (empty non-terminals). */
  private readonly exists = new Set<string>();
  private readonly soa: ResourceRecord;
  private readonly ns: ResourceRecord[];

  constructor(origin: string, records: readonly ResourceRecord[]) {
    this.origin = origin;
    for (const rr of records) {
      const list = this.names.get(rr.name) ?? [];
      list.push(rr);
      this.names.set(rr.name, list);
      for (let n = rr.name; n !== origin && n !== ''; n = parent(n)) this.exists.add(n);
    }
    this.exists.add(origin);
    this.soa = this.of(origin, Type.SOA)[0];
    this.serial = (this.soa.data as SoaData).serial;
    this.ns = this.of(origin, Type.NS);
  }

  contains(name: string): boolean {
    return inZone(this.origin, name);
  }

  private of(name: string, type: number): ResourceRecord[] {
    return (this.names.get(name) ?? []).filter((rr) => rr.type === type);
  }

  private answer(rcode: number, answers: ResourceRecord[], authorities: ResourceRecord[], aa = true, outside: string | null = null): ZoneAnswer {
    return { rcode, aa, answers, authorities, additionals: this.additional(answers), outside, nothing: false };
  }

  /** In-zone A and AAAA of the names MX, SRV and NS records point to. */
  private additional(rrs: readonly ResourceRecord[]): ResourceRecord[] {
    const out: ResourceRecord[] = [];
    for (const rr of rrs) {
      const target = rr.type === Type.MX ? (rr.data as { exchange: string }).exchange : rr.type === Type.SRV || rr.type === Type.NS ? (rr.data as { target: string }).target : null;
      if (target === null || !this.contains(target)) continue;
      out.push(...this.of(target, Type.A), ...this.of(target, Type.AAAA));
    }
    return out;
  }

  /** The NS below the apex on the way to `name` (the nearest the apex), or null. */
  private delegation(name: string, qtype: number): ResourceRecord[] | null {
    const path: string[] = [];
    for (let n = name; n !== this.origin && n !== ''; n = parent(n)) path.unshift(n);
    for (const n of path) {
      const ns = this.of(n, Type.NS);
      if (ns.length > 0 && !(n === name && qtype === 43 /* DS */)) return ns;
    }
    return null;
  }

  lookup(qname: string, qtype: number): ZoneAnswer {
    if (qname === this.origin && qtype === Type.SOA) return this.answer(Rcode.NOERROR, [this.soa], this.ns);
    if (qname === this.origin && qtype === Type.NS) return this.answer(Rcode.NOERROR, this.ns, []);
    const cut = this.delegation(qname, qtype);
    if (cut !== null) return { rcode: Rcode.NOERROR, aa: false, answers: [], authorities: cut, additionals: this.additional(cut), outside: null, nothing: false };
    const held = this.names.get(qname);
    if (held !== undefined) return this.records(qname, qname, qtype, held, []);
    const wildcard = this.wildcardFor(qname);
    if (wildcard !== null) {
      const held = this.names.get(wildcard);
      if (held === undefined) return this.answer(Rcode.NOERROR, [], [this.soa]);
      return this.records(qname, wildcard, qtype, held, []);
    }
    return { ...this.answer(this.exists.has(qname) ? Rcode.NOERROR : Rcode.NXDOMAIN, [], [this.soa]), nothing: true };
  }

  /** `*.<closest encloser>` when the name falls under a wildcard no closer name shadows; else null. */
  private wildcardFor(qname: string): string | null {
    for (let n = parent(qname); this.contains(n); n = parent(n)) {
      if (this.exists.has(`*.${n}`)) return `*.${n}`;
      if (this.exists.has(n) || n === this.origin) return null;
      if (n === '') return null;
    }
    return null;
  }

  /** What `owner` (found for `qname`) holds of `qtype`, a CNAME followed. */
  private records(qname: string, owner: string, qtype: number, held: ResourceRecord[], chain: ResourceRecord[]): ZoneAnswer {
    const own = (rrs: ResourceRecord[]) => rrs.map((rr) => (rr.name === qname ? rr : { ...rr, name: qname }));
    const cname = held.filter((rr) => rr.type === Type.CNAME);
    if (cname.length > 0 && qtype !== Type.CNAME) {
      const link = own(cname);
      const target = (cname[0].data as { target: string }).target.toLowerCase();
      if (target === qname) return { rcode: Rcode.SERVFAIL, aa: false, answers: [], authorities: [], additionals: [], outside: null, nothing: false };
      const next = [...chain, ...link];
      if (!this.contains(target)) return this.answer(Rcode.NOERROR, next, this.ns, true, target);
      const there = this.names.get(target);
      if (there === undefined || chain.length >= MAX_CHAIN) return this.answer(Rcode.NOERROR, next, this.ns);
      return this.records(target, target, qtype, there, next);
    }
    const rrs = own(held.filter((rr) => rr.type === qtype));
    if (rrs.length === 0 && chain.length === 0) return this.answer(Rcode.NOERROR, [], [this.soa]);
    return this.answer(Rcode.NOERROR, [...chain, ...rrs], this.ns);
  }
}
