// A growable scratch buffer for encoding, with RFC 1035 §4.1.4 name compression. One instance
// is reused for every message (encoding is synchronous), so the steady state allocates only
// the final copy of the bytes and the suffix strings of compressed names.

import { DnsEncodeError } from './errors.ts';
import { MAX_LABEL_LENGTH, MAX_NAME_LENGTH } from './constants.ts';
import { endsWithEscapedDot } from './names.ts';

const DOT = 0x2e;
const BACKSLASH = 0x5c;
/** Pointers hold 14 bits of offset. */
const POINTER_LIMIT = 0x4000;

export class WireWriter {
  buf: Buffer;
  pos = 0;
  /** Lowercased presentation suffix -> offset of its first copy in this message. */
  readonly names = new Map<string, number>();

  constructor(initialSize = 4096) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  reset(): void {
    this.pos = 0;
    this.names.clear();
  }

  ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf[this.pos++] = (v >>> 8) & 0xff;
    this.buf[this.pos++] = v & 0xff;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** One <character-string>: a length byte and up to 255 bytes of UTF-8. */
  charString(text: string): void {
    this.ensure(text.length * 3 + 1);
    const written = this.buf.write(text, this.pos + 1, 'utf8');
    if (written > 255) throw new DnsEncodeError('DNS_ERR_TXT', `character-string of ${written} bytes (max 255)`);
    this.buf[this.pos] = written;
    this.pos += written + 1;
  }

  /** Writes a copy of the finished message. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  /**
   * Writes a presentation name. With `compress`, reuses an earlier copy of any suffix
   * (compared ASCII-case-insensitively) and remembers this name's suffixes for later ones.
   */
  name(name: string, compress: boolean): void {
    let n = name.length;
    if (n > 0 && name.charCodeAt(n - 1) === DOT && !endsWithEscapedDot(name, n - 1)) n--;
    if (n === 0) {
      this.u8(0);
      return;
    }
    // One scan decides the path: escapes need the slow label writer; non-ASCII would make
    // String#toLowerCase fold more than DNS does, so such names are never compressed.
    let plain = true;
    let ascii = true;
    for (let i = 0; i < n; i++) {
      const c = name.charCodeAt(i);
      if (c === BACKSLASH) plain = false;
      else if (c > 0x7e) ascii = false;
    }
    if (plain) {
      if (n + 2 > MAX_NAME_LENGTH) throw new DnsEncodeError('DNS_ERR_NAME_TOO_LONG', `name over 255 bytes: ${name}`);
    } else if (wireLength(name, n) > MAX_NAME_LENGTH) {
      throw new DnsEncodeError('DNS_ERR_NAME_TOO_LONG', `name over 255 bytes: ${name}`);
    }
    this.ensure(n + 2);
    const lower = compress && ascii ? lowerAscii(name, n) : null;
    let start = 0;
    while (start < n) {
      if (lower !== null) {
        const key = start === 0 ? lower : lower.substring(start);
        const at = this.names.get(key);
        if (at !== undefined) {
          this.buf[this.pos++] = 0xc0 | (at >>> 8);
          this.buf[this.pos++] = at & 0xff;
          return;
        }
        if (this.pos < POINTER_LIMIT) this.names.set(key, this.pos);
      }
      start = plain ? this.plainLabel(name, start, n) : this.escapedLabel(name, start, n);
    }
    this.buf[this.pos++] = 0;
  }

  // Writes the label at name[start..] up to the next '.', returns where the next label starts.
  private plainLabel(name: string, start: number, n: number): number {
    let end = name.indexOf('.', start);
    if (end < 0 || end > n) end = n;
    const len = end - start;
    if (len === 0 || len > MAX_LABEL_LENGTH) throw labelError(name, len);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = len;
    for (let i = start; i < end; i++) {
      const c = name.charCodeAt(i);
      if (c > 0xff) throw new DnsEncodeError('DNS_ERR_LABEL', `character outside latin1 in ${JSON.stringify(name)}`);
      buf[p++] = c;
    }
    this.pos = p;
    return end + 1;
  }

  private escapedLabel(name: string, start: number, n: number): number {
    const lenAt = this.pos++;
    let len = 0;
    let i = start;
    while (i < n) {
      let c = name.charCodeAt(i);
      if (c === DOT) break;
      if (c === BACKSLASH) {
        const r = unescapeAt(name, i, n);
        c = r & 0xff;
        i = r >>> 8;
      } else {
        if (c > 0xff) throw new DnsEncodeError('DNS_ERR_LABEL', `character outside latin1 in ${JSON.stringify(name)}`);
        i++;
      }
      if (len === MAX_LABEL_LENGTH) throw labelError(name, len + 1);
      this.buf[this.pos++] = c;
      len++;
    }
    if (len === 0) throw labelError(name, 0);
    this.buf[lenAt] = len;
    return i + 1;
  }
}

function labelError(name: string, len: number): DnsEncodeError {
  return new DnsEncodeError(
    'DNS_ERR_LABEL',
    len === 0 ? `empty label in ${JSON.stringify(name)}` : `label over 63 bytes in ${JSON.stringify(name)}`,
  );
}

function lowerAscii(name: string, n: number): string {
  const s = n === name.length ? name : name.slice(0, n);
  return s.toLowerCase();
}

/**
 * Decodes the escape at name[i] (a backslash). Returns (nextIndex << 8) | byte so the hot loop
 * needs no result object.
 */
function unescapeAt(name: string, i: number, n: number): number {
  if (i + 1 >= n) throw new DnsEncodeError('DNS_ERR_NAME_ESCAPE', `dangling escape in ${JSON.stringify(name)}`);
  const c = name.charCodeAt(i + 1);
  if (c >= 48 && c <= 57) {
    if (i + 3 >= n) {
      throw new DnsEncodeError('DNS_ERR_NAME_ESCAPE', `short \\DDD escape in ${JSON.stringify(name)}`);
    }
    let v = 0;
    for (let k = 1; k <= 3; k++) {
      const d = name.charCodeAt(i + k) - 48;
      if (d < 0 || d > 9) throw new DnsEncodeError('DNS_ERR_NAME_ESCAPE', `bad \\DDD escape in ${JSON.stringify(name)}`);
      v = v * 10 + d;
    }
    if (v > 255) throw new DnsEncodeError('DNS_ERR_NAME_ESCAPE', `\\DDD over 255 in ${JSON.stringify(name)}`);
    return ((i + 4) << 8) | v;
  }
  if (c > 0xff) throw new DnsEncodeError('DNS_ERR_LABEL', `character outside latin1 in ${JSON.stringify(name)}`);
  return ((i + 2) << 8) | c;
}

/** Wire length of a name that contains escapes (labels + length bytes + root). */
function wireLength(name: string, n: number): number {
  let len = 1;
  let label = 0;
  let i = 0;
  while (i < n) {
    const c = name.charCodeAt(i);
    if (c === DOT) {
      len += label + 1;
      label = 0;
      i++;
      continue;
    }
    i = c === BACKSLASH ? unescapeAt(name, i, n) >>> 8 : i + 1;
    label++;
  }
  return len + (label > 0 ? label + 1 : 0);
}
