// IP address text forms used across kube-dns: the canonical text of an address (so one address is one
// map key), its reverse-zone name (PTR lookups) and its dashed label (pod names, endpoint names).
// Parsing and RFC 5952 formatting are pkg/dns's (ip.ts); this file only spells the forms. These run on
// query paths, so they work on a shared scratch array, not regexes.

import { formatIPv6, hexValue, parseIPv4, parseIPv6 } from '../dns/ip.ts';

export class IPError extends Error {
  readonly code = 'IP_ERR_INVALID';
  constructor(text: string) {
    super(`${JSON.stringify(text)} is not an IP address`);
    this.name = 'IPError';
  }
}

// The bytes of the last address parsed (4 for IPv4, 16 for IPv6). Single-threaded, so one is enough.
const bytes = new Uint8Array(16);

const CH_0 = 48;
const CH_9 = 57;
const CH_DOT = 46;
const CH_DASH = 45;

function isIPv4(s: string, start: number, end: number): boolean {
  return parseIPv4(s, start, end, bytes, 0);
}

/**
 * The canonical text of an IP address, or null if `s` is not one: IPv4 as a dotted quad (leading zeros
 * refused), IPv6 in RFC 5952 form ("2001:db8::1"); IPv4-mapped IPv6 stays IPv6 ("::ffff:10.0.0.1").
 */
export function canonicalIP(s: string): string | null {
  if (typeof s !== 'string' || s.length === 0 || s.length > 45) return null;
  if (s.indexOf(':') < 0) return isIPv4(s, 0, s.length) ? s : null;
  return parseIPv6(s, bytes, 0) ? formatIPv6(bytes, 0) : null;
}

/** The family of a valid IP text: 6 if it has a ':', else 4. */
export function ipFamily(ip: string): 4 | 6 {
  return ip.indexOf(':') >= 0 ? 6 : 4;
}

/** Parses `ip` into `bytes` and returns its family; throws IPError if it is not an IP. */
function parseOrThrow(ip: string): 4 | 6 {
  if (ip.indexOf(':') < 0) {
    if (!isIPv4(ip, 0, ip.length)) throw new IPError(ip);
    return 4;
  }
  if (!parseIPv6(ip, bytes, 0)) throw new IPError(ip);
  return 6;
}

const HEX = '0123456789abcdef';

/**
 * The reverse-zone name of an address, without a trailing dot: "10.0.0.1" → "1.0.0.10.in-addr.arpa",
 * IPv6 → 32 reversed nibbles + ".ip6.arpa". Throws IPError for a string that is not an IP.
 */
export function reverseName(ip: string): string {
  if (parseOrThrow(ip) === 4) return `${bytes[3]}.${bytes[2]}.${bytes[1]}.${bytes[0]}.in-addr.arpa`;
  let out = '';
  for (let i = 15; i >= 0; i--) {
    const b = bytes[i];
    out += `${HEX[b & 15]}.${HEX[b >>> 4]}.`;
  }
  return out + 'ip6.arpa';
}

const IN_ADDR = '.in-addr.arpa';
const IP6 = '.ip6.arpa';
const IP6_NIBBLES_LEN = 63; // 32 nibbles and 31 dots

function endsWithIgnoreCase(s: string, end: number, suffix: string): boolean {
  if (end < suffix.length) return false;
  const start = end - suffix.length;
  for (let i = 0; i < suffix.length; i++) {
    let c = s.charCodeAt(start + i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== suffix.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The address a reverse name stands for ("1.0.0.10.in-addr.arpa" → "10.0.0.1"), in canonical form;
 * null unless the name holds a complete address (4 octets, or 32 nibbles). Case and one trailing dot
 * are ignored.
 */
export function ipFromReverseName(name: string): string | null {
  let end = name.length;
  if (end > 0 && name.charCodeAt(end - 1) === CH_DOT) end--;
  if (endsWithIgnoreCase(name, end, IN_ADDR)) {
    if (!isIPv4(name, 0, end - IN_ADDR.length)) return null;
    // The labels are the octets in reverse order.
    return `${bytes[3]}.${bytes[2]}.${bytes[1]}.${bytes[0]}`;
  }
  if (endsWithIgnoreCase(name, end, IP6)) {
    if (end - IP6.length !== IP6_NIBBLES_LEN) return null;
    bytes.fill(0);
    for (let k = 0; k < 32; k++) {
      const pos = k * 2;
      if (k > 0 && name.charCodeAt(pos - 1) !== CH_DOT) return null;
      const h = hexValue(name.charCodeAt(pos));
      if (h < 0) return null;
      // The first label is the low nibble of the last byte.
      const nibble = 31 - k;
      bytes[nibble >>> 1] |= nibble & 1 ? h : h << 4;
    }
    return formatIPv6(bytes, 0);
  }
  return null;
}

/**
 * The address as one DNS label, as kube-dns and CoreDNS spell pod and endpoint names: "10.0.0.5" →
 * "10-0-0-5"; IPv6 canonical text with ':' → '-', a '0' added before a leading '-' and after a trailing
 * '-' ("fd00::1" → "fd00--1", "::1" → "0--1", "fd00::" → "fd00--0"). IPv4-mapped addresses use their hex
 * form so the label has no dots. Throws IPError for a string that is not an IP.
 */
export function dashedIP(ip: string): string {
  if (parseOrThrow(ip) === 4) return ip.replaceAll('.', '-');
  let out = formatIPv6(bytes, 0, false).replaceAll(':', '-');
  if (out.charCodeAt(0) === CH_DASH) out = '0' + out;
  if (out.charCodeAt(out.length - 1) === CH_DASH) out += '0';
  return out;
}

/** The inverse of dashedIP: the canonical address a dashed label names, or null if it names none. */
export function ipFromDashed(label: string): string | null {
  if (typeof label !== 'string' || label.length === 0 || label.length > 63) return null;
  let dashes = 0;
  let digitsOnly = true;
  for (let i = 0; i < label.length; i++) {
    const c = label.charCodeAt(i);
    if (c === CH_DASH) dashes++;
    else if (c < CH_0 || c > CH_9) {
      digitsOnly = false;
      if (hexValue(c) < 0) return null;
    }
  }
  if (dashes === 0) return null;
  if (digitsOnly && dashes === 3) {
    const dotted = label.replaceAll('-', '.');
    if (isIPv4(dotted, 0, dotted.length)) return dotted;
  }
  return parseIPv6(label.replaceAll('-', ':'), bytes, 0) ? formatIPv6(bytes, 0) : null;
}
