// Reads what the cache needs from an upstream reply without decoding it: where each TTL sits, the
// smallest one, and the negative-caching TTL from an SOA in the authority section (RFC 2308).

import { Flag, Type } from '../dns/constants.ts';
import { OFF_ANCOUNT, OFF_ARCOUNT, OFF_NSCOUNT, OFF_QDCOUNT, u16 } from '../dns/header.ts';
import { readTtl, skipName } from '../dns/walk.ts';

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

/** null when the reply cannot be walked (then it is relayed, never cached). */
export function readReplyShape(buf: Uint8Array): ReplyShape | null {
  if (buf.length < 12) return null;
  const qd = u16(buf, OFF_QDCOUNT);
  const an = u16(buf, OFF_ANCOUNT);
  const ns = u16(buf, OFF_NSCOUNT);
  const ar = u16(buf, OFF_ARCOUNT);
  let off = 12;
  for (let i = 0; i < qd; i++) {
    off = skipName(buf, off);
    if (off < 0 || off + 4 > buf.length) return null;
    off += 4;
  }
  const shape: ReplyShape = {
    rcode: buf[3] & 0x0f,
    truncated: (u16(buf, 2) & Flag.TC) !== 0,
    answerCount: an,
    ttlOffsets: [],
    minTtl: -1,
    soaNegativeTtl: -1,
  };
  const total = an + ns + ar;
  for (let i = 0; i < total; i++) {
    off = skipName(buf, off);
    if (off < 0 || off + 10 > buf.length) return null;
    const type = u16(buf, off);
    const ttlAt = off + 4;
    const rdStart = off + 10;
    const rdEnd = rdStart + u16(buf, off + 8);
    if (rdEnd > buf.length) return null;
    if (type !== Type.OPT) {
      const ttl = readTtl(buf, ttlAt);
      shape.ttlOffsets.push(ttlAt);
      if (shape.minTtl < 0 || ttl < shape.minTtl) shape.minTtl = ttl;
      if (type === Type.SOA && i >= an && i < an + ns && shape.soaNegativeTtl < 0) {
        // MINIMUM is the last 4 bytes of the SOA RDATA.
        if (rdEnd - rdStart >= 22) shape.soaNegativeTtl = Math.min(ttl, readTtl(buf, rdEnd - 4));
      }
    }
    off = rdEnd;
  }
  return shape;
}
