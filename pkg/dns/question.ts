// Hot-path readers that look at a request in place: the question (with its cache key copied
// out lowercased) and the OPT record. They return offsets or negative status numbers instead
// of throwing or allocating, because they run for every packet.

import { MAX_NAME_LENGTH, Type } from './constants.ts';

/** Negative results of readQuestion / readOpt. */
export const ReadStatus = {
  SHORT: -1,
  LABEL: -2,
  NAME_TOO_LONG: -3,
  /** A compression pointer in the question: legal in theory, never sent by real clients. */
  POINTER: -4,
  NOT_OPT: -5,
  BAD_OPT: -6,
  /** An EDNS Client Subnet option RFC 7871 §7.1.1 says to answer with FORMERR. */
  BAD_ECS: -7,
} as const;

const reasons = ['', 'short', 'label', 'name-too-long', 'question-pointer', 'not-opt', 'bad-opt', 'bad-ecs'];

/** EDNS option code of Client Subnet (RFC 7871). */
export const OPTION_ECS = 8;

export function readStatusReason(status: number): string {
  return reasons[-status] ?? 'unknown';
}

/** Room a key buffer needs: the longest name plus QTYPE and QCLASS. */
export const QUESTION_KEY_MAX = MAX_NAME_LENGTH + 4;

/**
 * Walks the question starting at `off` (12 for the first one) and returns the offset just
 * after QCLASS, or a negative ReadStatus. When `lower` is given (QUESTION_KEY_MAX bytes), the
 * question bytes are copied into it from index 0 with ASCII letters of the name lowercased.
 */
export function readQuestion(buf: Uint8Array, off = 12, lower?: Uint8Array): number {
  const n = buf.length;
  let p = off;
  for (;;) {
    if (p >= n) return ReadStatus.SHORT;
    const len = buf[p];
    if (len === 0) break;
    if (len & 0xc0) return (len & 0xc0) === 0xc0 ? ReadStatus.POINTER : ReadStatus.LABEL;
    const next = p + 1 + len;
    if (next - off + 1 > MAX_NAME_LENGTH) return ReadStatus.NAME_TOO_LONG;
    if (next > n) return ReadStatus.SHORT;
    if (lower !== undefined) {
      lower[p - off] = len;
      for (let i = p + 1; i < next; i++) {
        const c = buf[i];
        lower[i - off] = c >= 65 && c <= 90 ? c | 0x20 : c;
      }
    }
    p = next;
  }
  const end = p + 5;
  if (end > n) return ReadStatus.SHORT;
  if (lower !== undefined) {
    for (let i = p; i < end; i++) lower[i - off] = buf[i];
  }
  return end;
}

/** What the server needs from a request's OPT record; reused between packets. */
export interface OptView {
  udpSize: number;
  extendedRcode: number;
  version: number;
  do: boolean;
  /** The Client Subnet option's family (1 IPv4, 2 IPv6), 0 without one. */
  ecsFamily: number;
  ecsSourcePrefix: number;
  /** Where its address bytes are in the request, and how many (the prefix's, rounded up). */
  ecsAddressAt: number;
  ecsAddressLength: number;
}

export function emptyOptView(): OptView {
  return { udpSize: 0, extendedRcode: 0, version: 0, do: false, ecsFamily: 0, ecsSourcePrefix: 0, ecsAddressAt: 0, ecsAddressLength: 0 };
}

/**
 * A Client Subnet option's data at `p` (`len` bytes) into `view`; false when RFC 7871 says FORMERR:
 * an unknown family, a prefix longer than the family's address, address bytes not exactly the
 * prefix's, bits set beyond the prefix, or a SCOPE PREFIX-LENGTH other than 0 in a query.
 */
function readEcs(buf: Uint8Array, p: number, len: number, view: OptView): boolean {
  if (len < 4) return false;
  const family = (buf[p] << 8) | buf[p + 1];
  const source = buf[p + 2];
  const bytes = len - 4;
  if ((family !== 1 && family !== 2) || source > (family === 1 ? 32 : 128) || buf[p + 3] !== 0) return false;
  if (bytes !== (source + 7) >>> 3) return false;
  if (source % 8 !== 0 && (buf[p + 4 + bytes - 1] & (0xff >>> (source % 8))) !== 0) return false;
  view.ecsFamily = family;
  view.ecsSourcePrefix = source;
  view.ecsAddressAt = p + 4;
  view.ecsAddressLength = bytes;
  return true;
}

/**
 * Reads the OPT record at `off` (which must be the whole additional section) into `view` and
 * returns the offset after it, or NOT_OPT / BAD_OPT / SHORT.
 */
export function readOpt(buf: Uint8Array, off: number, view: OptView): number {
  const n = buf.length;
  if (off + 11 > n) return ReadStatus.SHORT;
  // An OPT owner is the root, so a well-formed OPT starts 00 00 29; anything else is not one.
  if (buf[off] !== 0 || buf[off + 1] !== 0 || buf[off + 2] !== Type.OPT) return ReadStatus.NOT_OPT;
  view.udpSize = (buf[off + 3] << 8) | buf[off + 4];
  view.extendedRcode = buf[off + 5];
  view.version = buf[off + 6];
  view.do = (buf[off + 7] & 0x80) !== 0;
  view.ecsFamily = 0;
  const rdlen = (buf[off + 9] << 8) | buf[off + 10];
  const end = off + 11 + rdlen;
  if (end > n) return ReadStatus.SHORT;
  // Options must tile the RDATA exactly.
  let p = off + 11;
  while (p < end) {
    if (p + 4 > end) return ReadStatus.BAD_OPT;
    const len = (buf[p + 2] << 8) | buf[p + 3];
    if (((buf[p] << 8) | buf[p + 1]) === OPTION_ECS && p + 4 + len <= end && !readEcs(buf, p + 4, len, view)) return ReadStatus.BAD_ECS;
    p += 4 + len;
  }
  return p === end ? end : ReadStatus.BAD_OPT;
}
