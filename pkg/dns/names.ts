// Domain names: wire -> presentation text (with compression pointers) and the helpers the
// server keys its cache with. Presentation form is described in message.ts: no trailing dot,
// case kept, RFC 1035 escapes (\. \\ \DDD) for bytes that are not plain printable ASCII.

import { DnsParseError } from './errors.ts';
import { MAX_NAME_LENGTH } from './constants.ts';

/** Position holder so that name reads can return a string and still move the caller on. */
export interface Cursor {
  pos: number;
}

const DOT = 0x2e;
const BACKSLASH = 0x5c;

// Presentation bytes of the name being read: at most 255 wire bytes, each escaped as up to 4.
const text = Buffer.allocUnsafe(MAX_NAME_LENGTH * 4);

// Appends one label's presentation form at text[at..]; returns the new end.
function appendLabel(buf: Uint8Array, start: number, end: number, at: number): number {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c > 0x20 && c < 0x7f && c !== DOT && c !== BACKSLASH) {
      text[at++] = c;
    } else if (c === DOT || c === BACKSLASH) {
      text[at++] = BACKSLASH;
      text[at++] = c;
    } else {
      text[at++] = BACKSLASH;
      text[at++] = 0x30 + ((c / 100) | 0);
      text[at++] = 0x30 + (((c / 10) | 0) % 10);
      text[at++] = 0x30 + (c % 10);
    }
  }
  return at;
}

/**
 * Reads the name at `cur.pos` and leaves `cur.pos` just after it (after the first pointer when
 * compressed). In-place bytes must end before `limit` (the end of the section or RDATA).
 *
 * Pointer rule: every pointer must jump strictly below the start of the run of labels it
 * ends. That makes loops impossible to follow and lets us tell a loop (the target lies in
 * this run or at the pointer itself) from a forward or out-of-range pointer.
 */
export function readName(buf: Buffer, cur: Cursor, limit: number): string {
  let p = cur.pos;
  let runStart = p;
  let bound = limit;
  let end = -1;
  let wire = 1;
  let len = 0; // presentation bytes in `text`
  for (;;) {
    if (p >= bound) throw overrun(buf, bound, p);
    const size = buf[p];
    if (size === 0) {
      if (end < 0) end = p + 1;
      break;
    }
    const kind = size & 0xc0;
    if (kind === 0xc0) {
      if (p + 1 >= bound) throw overrun(buf, bound, p);
      const target = ((size & 0x3f) << 8) | buf[p + 1];
      if (end < 0) {
        end = p + 2;
        bound = buf.length;
      }
      if (target > p || target >= buf.length) {
        throw new DnsParseError('DNS_ERR_BAD_POINTER', `pointer to ${target} is not backwards`, p);
      }
      if (target >= runStart) throw new DnsParseError('DNS_ERR_POINTER_LOOP', `pointer loop at ${p}`, p);
      p = runStart = target;
      continue;
    }
    if (kind !== 0) throw new DnsParseError('DNS_ERR_LABEL', `label type 0x${kind.toString(16)}`, p);
    wire += size + 1;
    if (wire > MAX_NAME_LENGTH) throw new DnsParseError('DNS_ERR_NAME_TOO_LONG', 'name over 255 bytes', p);
    const start = p + 1;
    p = start + size;
    if (p > bound) throw overrun(buf, bound, start);
    if (len > 0) text[len++] = DOT;
    len = appendLabel(buf, start, p, len);
  }
  cur.pos = end;
  return len === 0 ? '' : text.toString('latin1', 0, len);
}

// Past the end of the message: short; past the end of the RDATA holding the name: bad RDATA.
function overrun(buf: Buffer, bound: number, at: number): DnsParseError {
  return bound < buf.length
    ? new DnsParseError('DNS_ERR_RDATA', 'name runs past the end of its RDATA', at)
    : new DnsParseError('DNS_ERR_SHORT', 'name runs past the end of the message', at);
}

/**
 * Whether canonical `name` is `zone` or below it on a label boundary ('' holds every name). Allocates
 * nothing: it runs per query.
 */
export function inZone(zone: string, name: string): boolean {
  return zone === '' || name === zone || (name.length > zone.length && name.endsWith(zone) && name.charCodeAt(name.length - zone.length - 1) === DOT);
}

/** Lowercase (ASCII only, as DNS compares names) and drop one trailing dot. */
export function canonicalName(name: string): string {
  let n = name.length;
  if (n > 0 && name.charCodeAt(n - 1) === DOT && !endsWithEscapedDot(name, n - 1)) n--;
  let i = 0;
  while (i < n) {
    const c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) break;
    i++;
  }
  if (i === n) return n === name.length ? name : name.slice(0, n);
  let s = name.slice(0, i);
  for (; i < n; i++) {
    const c = name.charCodeAt(i);
    s += c >= 65 && c <= 90 ? String.fromCharCode(c | 0x20) : name[i];
  }
  return s;
}

/** True when the '.' at `dot` is escaped ("a\." is a label ending in a dot, not a root dot). */
export function endsWithEscapedDot(name: string, dot: number): boolean {
  let slashes = 0;
  for (let i = dot - 1; i >= 0 && name.charCodeAt(i) === BACKSLASH; i--) slashes++;
  return (slashes & 1) === 1;
}
