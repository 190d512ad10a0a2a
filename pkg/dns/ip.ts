// Address text <-> bytes: RDATA for A and AAAA, and the one IP parser/formatter the rest of the tree
// builds on (pkg/cluster, pkg/config). Hand-rolled (no split/regex per call) because encoding runs once
// per answer-cache miss for every address record.

import { DnsEncodeError } from './errors.ts';

const CH_0 = 48;
const CH_9 = 57;
const CH_DOT = 46;
const CH_COLON = 58;

/** Writes a dotted quad at `out[off..off+4]`; throws DNS_ERR_ADDRESS on anything else. */
export function writeIPv4(text: string, out: Uint8Array, off: number): void {
  if (!parseIPv4(text, 0, text.length, out, off)) {
    throw new DnsEncodeError('DNS_ERR_ADDRESS', `not an IPv4 address: ${JSON.stringify(text)}`);
  }
}

/**
 * Reads a strict dotted quad in `text[start, end)` into `out[off..off+4]`: four decimal parts 0-255, no
 * leading zeros (as Go's net.ParseIP since 1.17, so "010.0.0.1" is refused rather than read as octal),
 * nothing else. False if it is not one; `out` may then hold part of it.
 */
export function parseIPv4(text: string, start: number, end: number, out: Uint8Array, off: number): boolean {
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = start; i <= end; i++) {
    const c = i === end ? CH_DOT : text.charCodeAt(i);
    if (c === CH_DOT) {
      if (digits === 0 || part > 3) return false;
      out[off + part] = value;
      part++;
      value = 0;
      digits = 0;
    } else if (c >= CH_0 && c <= CH_9) {
      if (digits === 1 && value === 0) return false; // leading zero
      value = value * 10 + (c - CH_0);
      digits++;
      if (value > 255) return false;
    } else {
      return false;
    }
  }
  return part === 4;
}

/** The value of a hex digit's char code (either case), or -1. */
export function hexValue(c: number): number {
  if (c >= CH_0 && c <= CH_9) return c - CH_0;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/** Writes 16 bytes for any RFC 4291 text form (including "::" and a trailing dotted quad). */
export function writeIPv6(text: string, out: Uint8Array, off: number): void {
  if (!parseIPv6(text, out, off)) {
    throw new DnsEncodeError('DNS_ERR_ADDRESS', `not an IPv6 address: ${JSON.stringify(text)}`);
  }
}

/**
 * Reads any RFC 4291 text form (with "::" and an optional trailing dotted quad; no zone such as
 * "%eth0") into `out[off..off+16]`. False if it is not one; `out` may then hold part of it.
 */
export function parseIPv6(text: string, out: Uint8Array, off: number): boolean {
  const n = text.length;
  if (n < 2 || n > 45) return false;
  // Groups before "::" go left to right; groups after it are collected then shifted right.
  let group = 0; // 16-bit groups written so far
  let gap = -1; // group index where "::" sits
  let i = 0;
  if (text.charCodeAt(0) === CH_COLON) {
    if (text.charCodeAt(1) !== CH_COLON) return false;
    gap = 0;
    i = 2;
    if (i === n) {
      out.fill(0, off, off + 16);
      return true;
    }
  }
  while (i < n) {
    if (group === 8) return false;
    // Find the end of this group.
    let j = i;
    let value = 0;
    let isV4 = false;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === CH_COLON) break;
      if (c === CH_DOT) {
        isV4 = true;
        break;
      }
      const h = hexValue(c);
      if (h < 0 || j - i >= 4) return false;
      value = (value << 4) | h;
      j++;
    }
    if (isV4) {
      if (group > 6) return false;
      if (!parseIPv4(text, i, n, out, off + group * 2)) return false;
      group += 2;
      i = n;
      break;
    }
    if (j === i) return false; // empty group
    out[off + group * 2] = value >> 8;
    out[off + group * 2 + 1] = value & 0xff;
    group++;
    if (j === n) {
      i = n;
      break;
    }
    // j is at ':'
    if (text.charCodeAt(j + 1) === CH_COLON) {
      if (gap >= 0) return false;
      gap = group;
      i = j + 2;
      if (i === n) break;
    } else {
      i = j + 1;
      if (i === n) return false; // trailing single ':'
    }
  }
  if (gap < 0) return group === 8;
  if (group === 8) return false; // "::" must stand for at least one group
  // Shift the groups after the gap to the end, zero the middle.
  const tail = group - gap;
  const zeros = 8 - group;
  for (let k = tail - 1; k >= 0; k--) {
    const from = off + (gap + k) * 2;
    const to = off + (gap + zeros + k) * 2;
    out[to] = out[from];
    out[to + 1] = out[from + 1];
  }
  out.fill(0, off + gap * 2, off + (gap + zeros) * 2);
  return true;
}

export function formatIPv4(buf: Uint8Array, off: number): string {
  return `${buf[off]}.${buf[off + 1]}.${buf[off + 2]}.${buf[off + 3]}`;
}

/**
 * RFC 5952 text: lowercase, no leading zeros, the longest run (>= 2) of zero groups as "::". An
 * IPv4-mapped address keeps its dotted quad unless `mappedAsIPv4` is false (for text that must not
 * hold dots, such as a DNS label).
 */
export function formatIPv6(buf: Uint8Array, off: number, mappedAsIPv4 = true): string {
  let bestStart = -1;
  let bestLen = 0;
  let runStart = -1;
  for (let g = 0; g <= 8; g++) {
    const zero = g < 8 && buf[off + g * 2] === 0 && buf[off + g * 2 + 1] === 0;
    if (zero) {
      if (runStart < 0) runStart = g;
    } else if (runStart >= 0) {
      const len = g - runStart;
      if (len > bestLen) {
        bestStart = runStart;
        bestLen = len;
      }
      runStart = -1;
    }
  }
  if (bestLen < 2) bestStart = -1;
  // IPv4-mapped (::ffff:0:0/96) keeps the dotted quad, as RFC 5952 §5 recommends.
  if (mappedAsIPv4 && bestStart === 0 && bestLen === 5 && buf[off + 10] === 0xff && buf[off + 11] === 0xff) {
    return `::ffff:${formatIPv4(buf, off + 12)}`;
  }
  let s = '';
  for (let g = 0; g < 8; g++) {
    if (g === bestStart) {
      s += '::';
      g += bestLen - 1;
      continue;
    }
    if (s !== '' && !s.endsWith(':')) s += ':';
    s += ((buf[off + g * 2] << 8) | buf[off + g * 2 + 1]).toString(16);
  }
  return s;
}

/**
 * Whether an address text (canonical, as sockets and normalized upstreams give it) is loopback:
 * 127.0.0.0/8, ::1, or 127.x mapped into IPv6 (an IPv4 sender on a dual-stack socket).
 */
export function isLoopback(text: string): boolean {
  return text.startsWith('127.') || text === '::1' || text.startsWith('::ffff:127.');
}

// Room for the address ipVersion parses and throws away. Single-threaded, so one is enough.
const scratch = new Uint8Array(16);

/** 4 or 6 for an IP literal as parseIPv4/parseIPv6 take it (no zone suffix), else 0. */
export function ipVersion(text: string): 0 | 4 | 6 {
  if (text.indexOf(':') >= 0) return parseIPv6(text, scratch, 0) ? 6 : 0;
  return parseIPv4(text, 0, text.length, scratch, 0) ? 4 : 0;
}
