// One resource record in RFC 1035 presentation ("zone file") form → a ResourceRecord, as miekg/dns's
// NewRR reads a line: `NAME [TTL] [CLASS] TYPE RDATA` (TTL and class in either order; class IN
// unsaid, the TTL `ttl` (3600 unsaid)). A name without a final dot is relative to `origin` (`@` is
// the origin itself); without an origin it is taken as fully qualified, as NewRR does.
// Types: A, AAAA, CNAME, PTR, NS, TXT, MX, SRV, SOA. Throws RrTextError on anything else.

const { isIP } = process.getBuiltinModule('node:net');
import { Class, Type } from './constants.ts';
import type { ResourceRecord } from './message.ts';

export class RrTextError extends Error {
  readonly code = 'DNS_ERR_RR_TEXT';
}

/** The record types rrFromText reads. */
export const RR_TEXT_TYPES: Readonly<Record<string, number>> = { A: Type.A, AAAA: Type.AAAA, CNAME: Type.CNAME, PTR: Type.PTR, NS: Type.NS, TXT: Type.TXT, MX: Type.MX, SRV: Type.SRV, SOA: Type.SOA };
const CLASSES: Readonly<Record<string, number>> = { IN: Class.IN, CH: Class.CH, HS: 4, ANY: Class.ANY };
const DEFAULT_TTL = 3600;

/** Words, a double-quoted one (TXT) kept whole with its quotes; `;` starts a comment. */
function words(text: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|;.*$|(\S+)/g;
  for (const m of text.matchAll(re)) {
    if (m[0].startsWith(';')) break;
    out.push(m[1] !== undefined ? `"${m[1]}"` : m[2]);
  }
  return out;
}

/** Where names are read: relative names below `origin` (canonical, '' the root); null: none. */
interface Reading {
  origin: string | null;
}

/** A name as written, without its final dot (`.` is the root: ''), made absolute below the origin. */
function nameIn(w: string, r: Reading): string {
  if (w === '@' && r.origin !== null) return r.origin;
  if (w === '.') return '';
  if (w.endsWith('.') || r.origin === null) return w.replace(/\.$/, '');
  return r.origin === '' ? w : `${w}.${r.origin}`;
}

function uint(w: string | undefined, what: string, max: number): number {
  if (w === undefined || !/^\d+$/.test(w) || Number(w) > max) throw new RrTextError(`${what}: ${JSON.stringify(w ?? '')} is not a number up to ${max}`);
  return Number(w);
}

const unquote = (w: string) => (w.startsWith('"') ? w.slice(1, -1).replace(/\\(.)/g, '$1') : w);

export function rrFromText(text: string, o: { origin?: string; ttl?: number } = {}): ResourceRecord {
  const w = words(text);
  if (w.length < 3) throw new RrTextError(`not a record: ${JSON.stringify(text)}`);
  const r: Reading = { origin: o.origin ?? null };
  const nameOf = (x: string) => nameIn(x, r);
  const name = nameOf(w[0]);
  let ttl = o.ttl ?? DEFAULT_TTL;
  let klass: number = Class.IN;
  let i = 1;
  for (; i < 3 && i < w.length; i++) {
    if (/^\d+$/.test(w[i])) ttl = uint(w[i], 'TTL', 2 ** 31 - 1);
    else if (CLASSES[w[i].toUpperCase()] !== undefined) klass = CLASSES[w[i].toUpperCase()];
    else break;
  }
  const typeWord = (w[i] ?? '').toUpperCase();
  const type = RR_TEXT_TYPES[typeWord];
  if (type === undefined) throw new RrTextError(`record type ${JSON.stringify(w[i] ?? '')} is not one of ${Object.keys(RR_TEXT_TYPES).join(', ')}`);
  const rdata = w.slice(i + 1);
  const want = (n: number) => {
    if (rdata.length !== n) throw new RrTextError(`${typeWord} takes ${n} data fields, not ${rdata.length}: ${JSON.stringify(text)}`);
  };
  const rr = (data: ResourceRecord['data']): ResourceRecord => ({ name, type, class: klass, ttl, data });
  switch (type) {
    case Type.A:
    case Type.AAAA:
      want(1);
      if (isIP(rdata[0]) !== (type === Type.A ? 4 : 6)) throw new RrTextError(`${typeWord}: ${JSON.stringify(rdata[0])} is not an IPv${type === Type.A ? 4 : 6} address`);
      return rr({ address: rdata[0] });
    case Type.CNAME:
    case Type.PTR:
    case Type.NS:
      want(1);
      return rr({ target: nameOf(rdata[0]) });
    case Type.TXT:
      if (rdata.length === 0) throw new RrTextError('TXT takes at least one string');
      return rr({ texts: rdata.map(unquote) });
    case Type.MX:
      want(2);
      return rr({ preference: uint(rdata[0], 'MX preference', 65535), exchange: nameOf(rdata[1]) });
    case Type.SRV:
      want(4);
      return rr({ priority: uint(rdata[0], 'SRV priority', 65535), weight: uint(rdata[1], 'SRV weight', 65535), port: uint(rdata[2], 'SRV port', 65535), target: nameOf(rdata[3]) });
    default: {
      want(7);
      const n = (k: number, what: string) => uint(rdata[k], `SOA ${what}`, 2 ** 32 - 1);
      return rr({ mname: nameOf(rdata[0]), rname: nameOf(rdata[1]), serial: n(2, 'serial'), refresh: n(3, 'refresh'), retry: n(4, 'retry'), expire: n(5, 'expire'), minimum: n(6, 'minimum') });
    }
  }
}
