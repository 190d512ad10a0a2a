// Walking a message in place without decoding it: for code that only needs offsets (relayed answers
// turned into templates, a cache that rewrites TTLs).

/** skipName results below zero. */
export const NAME_PAST_END = -1;
export const NAME_BAD_LABEL = -2;

/**
 * The offset just after the name at `off` (pointers allowed, not followed), or NAME_PAST_END /
 * NAME_BAD_LABEL.
 */
export function skipName(buf: Uint8Array, off: number): number {
  while (off < buf.length) {
    const len = buf[off];
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) return off + 2 <= buf.length ? off + 2 : NAME_PAST_END;
    if (len & 0xc0) return NAME_BAD_LABEL;
    off += len + 1;
  }
  return NAME_PAST_END;
}

/** A TTL field; one with the top bit set counts as 0 (RFC 2181 §8). */
export function readTtl(buf: Uint8Array, off: number): number {
  const v = ((buf[off] << 24) | (buf[off + 1] << 16) | (buf[off + 2] << 8) | buf[off + 3]) >>> 0;
  return v > 0x7fffffff ? 0 : v;
}

export function writeTtl(buf: Uint8Array, off: number, ttl: number): void {
  buf[off] = ttl >>> 24;
  buf[off + 1] = (ttl >>> 16) & 0xff;
  buf[off + 2] = (ttl >>> 8) & 0xff;
  buf[off + 3] = ttl & 0xff;
}

/**
 * Whether a[start, end) and b[start, end) hold the same wire name, ASCII letters compared without
 * case (0x20 randomisation). Length bytes are never 0x41-0x5a (at most 63), so folding every byte is safe.
 */
export function sameNameBytes(a: Uint8Array, b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    let x = a[i];
    let y = b[i];
    if (x === y) continue;
    if (x >= 0x41 && x <= 0x5a) x |= 0x20;
    if (y >= 0x41 && y <= 0x5a) y |= 0x20;
    if (x !== y) return false;
  }
  return true;
}
