// Reads what the cache needs from an upstream reply without decoding it: where each TTL sits, the
// smallest one, and the negative-caching TTL from an SOA in the authority section (RFC 2308).

const TYPE_SOA = 6;
const TYPE_OPT = 41;

export interface ReplyShape {
  rcode: number;
  truncated: boolean;
  answerCount: number;
  /** Byte offsets of every TTL field, OPT excluded. */
  ttlOffsets: number[];
  /** Smallest TTL over those records; -1 when there are none. */
  minTtl: number;
  /** min(SOA TTL, SOA MINIMUM) of the first authority SOA; -1 when there is none. */
  soaNegativeTtl: number;
}

/** A TTL with the top bit set counts as 0 (RFC 2181 §8). */
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

/** The offset after the name at `off`, or -1 when it runs past the end. */
function skipName(buf: Uint8Array, off: number): number {
  while (off < buf.length) {
    const len = buf[off];
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) return off + 2 <= buf.length ? off + 2 : -1;
    if (len & 0xc0) return -1;
    off += len + 1;
  }
  return -1;
}

/** null when the reply cannot be walked (then it is relayed, never cached). */
export function readReplyShape(buf: Uint8Array): ReplyShape | null {
  if (buf.length < 12) return null;
  const count = (i: number) => (buf[i] << 8) | buf[i + 1];
  const qd = count(4);
  const an = count(6);
  const ns = count(8);
  const ar = count(10);
  let off = 12;
  for (let i = 0; i < qd; i++) {
    off = skipName(buf, off);
    if (off < 0 || off + 4 > buf.length) return null;
    off += 4;
  }
  const shape: ReplyShape = {
    rcode: buf[3] & 0x0f,
    truncated: (buf[2] & 0x02) !== 0,
    answerCount: an,
    ttlOffsets: [],
    minTtl: -1,
    soaNegativeTtl: -1,
  };
  const total = an + ns + ar;
  for (let i = 0; i < total; i++) {
    off = skipName(buf, off);
    if (off < 0 || off + 10 > buf.length) return null;
    const type = count(off);
    const ttlAt = off + 4;
    const rdStart = off + 10;
    const rdEnd = rdStart + count(off + 8);
    if (rdEnd > buf.length) return null;
    if (type !== TYPE_OPT) {
      const ttl = readTtl(buf, ttlAt);
      shape.ttlOffsets.push(ttlAt);
      if (shape.minTtl < 0 || ttl < shape.minTtl) shape.minTtl = ttl;
      if (type === TYPE_SOA && i >= an && i < an + ns && shape.soaNegativeTtl < 0) {
        // MINIMUM is the last 4 bytes of the SOA RDATA.
        if (rdEnd - rdStart >= 22) shape.soaNegativeTtl = Math.min(ttl, readTtl(buf, rdEnd - 4));
      }
    }
    off = rdEnd;
  }
  return shape;
}
