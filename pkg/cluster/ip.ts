// IP address text forms used across kube-dns: the canonical text of an address (so one address is one
// map key), its reverse-zone name (PTR lookups) and its dashed label (pod names, endpoint names).
// These run on query paths, so they parse with char codes into a shared scratch array, not regexes.

export class IPError extends Error {
  readonly code = 'IP_ERR_INVALID';
  constructor(text: string) {
    super(`${JSON.stringify(text)} is not an IP address`);
    this.name = 'IPError';
  }
}

// The 8 groups of the last IPv6 address parsed. Single-threaded, so one scratch array is enough.
const groups = new Uint16Array(8);

const CH_0 = 48;
const CH_9 = 57;
const CH_A = 97; // 'a'
const CH_F = 102; // 'f'
const CH_UA = 65; // 'A'
const CH_UF = 70; // 'F'
const CH_DOT = 46;
const CH_COLON = 58;

function hexValue(c: number): number {
  if (c >= CH_0 && c <= CH_9) return c - CH_0;
  if (c >= CH_A && c <= CH_F) return c - CH_A + 10;
  if (c >= CH_UA && c <= CH_UF) return c - CH_UA + 10;
  return -1;
}

/**
 * Parses a dotted quad in s[start, end) as Go's net.ParseIP does since Go 1.17: four decimal parts
 * 0-255, no leading zeros (so "010.0.0.1" is refused rather than silently read as octal or decimal).
 * Returns the address as a 32-bit unsigned number, or -1.
 */
function parseIPv4(s: string, start: number, end: number): number {
  let value = 0;
  let parts = 0;
  let i = start;
  while (parts < 4) {
    const partStart = i;
    let part = 0;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c < CH_0 || c > CH_9) break;
      part = part * 10 + (c - CH_0);
      i++;
    }
    const len = i - partStart;
    if (len === 0 || len > 3 || part > 255) return -1;
    if (len > 1 && s.charCodeAt(partStart) === CH_0) return -1;
    value = value * 256 + part;
    parts++;
    if (parts < 4) {
      if (i >= end || s.charCodeAt(i) !== CH_DOT) return -1;
      i++;
    }
  }
  return i === end ? value : -1;
}

/** Parses IPv6 text (with '::' and an optional trailing dotted quad) into `groups`. No zone (%eth0). */
function parseIPv6(s: string): boolean {
  const end = s.length;
  if (end < 2) return false;
  let gap = -1; // index in groups where '::' stands
  let n = 0;
  let i = 0;
  if (s.charCodeAt(0) === CH_COLON) {
    if (s.charCodeAt(1) !== CH_COLON) return false;
    gap = 0;
    i = 2;
    if (i === end) {
      groups.fill(0);
      return true;
    }
  }
  while (i < end) {
    if (n === 8) return false;
    // A dotted quad may end the address, standing for the last two groups.
    let dotAhead = false;
    for (let j = i; j < end && j < i + 4; j++) {
      const c = s.charCodeAt(j);
      if (c === CH_DOT) {
        dotAhead = true;
        break;
      }
      if (c === CH_COLON) break;
    }
    if (dotAhead) {
      if (n > 6) return false;
      const v4 = parseIPv4(s, i, end);
      if (v4 < 0) return false;
      groups[n++] = v4 >>> 16;
      groups[n++] = v4 & 0xffff;
      i = end;
      break;
    }
    let group = 0;
    const groupStart = i;
    while (i < end) {
      const h = hexValue(s.charCodeAt(i));
      if (h < 0) break;
      group = group * 16 + h;
      i++;
    }
    const len = i - groupStart;
    if (len === 0 || len > 4) return false;
    groups[n++] = group;
    if (i === end) break;
    if (s.charCodeAt(i) !== CH_COLON) return false;
    i++;
    if (i < end && s.charCodeAt(i) === CH_COLON) {
      if (gap >= 0) return false; // a second '::'
      gap = n;
      i++;
      if (i === end) break;
    } else if (i === end) {
      return false; // a trailing single ':'
    }
  }
  if (gap < 0) return n === 8;
  if (n === 8) return false; // '::' must stand for at least one group
  // Move the groups after the gap to the end and zero the gap.
  const after = n - gap;
  for (let k = 0; k < after; k++) groups[7 - k] = groups[n - 1 - k];
  for (let k = gap; k < 8 - after; k++) groups[k] = 0;
  return true;
}

function ipv4Text(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

function isMapped(): boolean {
  return (
    groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff
  );
}

/** RFC 5952 text of `groups`: lowercase, no leading zeros, the longest run (≥2) of zero groups as '::'. */
function formatIPv6(mixed: boolean): string {
  if (mixed && isMapped()) return `::ffff:${ipv4Text(groups[6] * 65536 + groups[7])}`;
  let bestStart = -1;
  let bestLen = 1; // a single zero group is never compressed
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      out += '::';
      i += bestLen - 1;
      continue;
    }
    if (out.length > 0 && !out.endsWith(':')) out += ':';
    out += groups[i].toString(16);
  }
  return out;
}

/**
 * The canonical text of an IP address, or null if `s` is not one: IPv4 as a dotted quad (leading zeros
 * refused), IPv6 in RFC 5952 form ("2001:db8::1"); IPv4-mapped IPv6 stays IPv6 ("::ffff:10.0.0.1").
 */
export function canonicalIP(s: string): string | null {
  if (typeof s !== 'string' || s.length === 0 || s.length > 45) return null;
  if (s.indexOf(':') < 0) return parseIPv4(s, 0, s.length) >= 0 ? s : null;
  return parseIPv6(s) ? formatIPv6(true) : null;
}

/** The family of a valid IP text: 6 if it has a ':', else 4. */
export function ipFamily(ip: string): 4 | 6 {
  return ip.indexOf(':') >= 0 ? 6 : 4;
}

/** Parses `ip` into `groups` (IPv6) or returns its IPv4 value; throws IPError if it is not an IP. */
function parseOrThrow(ip: string): number {
  if (ip.indexOf(':') < 0) {
    const v4 = parseIPv4(ip, 0, ip.length);
    if (v4 < 0) throw new IPError(ip);
    return v4;
  }
  if (!parseIPv6(ip)) throw new IPError(ip);
  return -1;
}

const HEX = '0123456789abcdef';

/**
 * The reverse-zone name of an address, without a trailing dot: "10.0.0.1" → "1.0.0.10.in-addr.arpa",
 * IPv6 → 32 reversed nibbles + ".ip6.arpa". Throws IPError for a string that is not an IP.
 */
export function reverseName(ip: string): string {
  const v4 = parseOrThrow(ip);
  if (v4 >= 0) return `${v4 & 255}.${(v4 >>> 8) & 255}.${(v4 >>> 16) & 255}.${v4 >>> 24}.in-addr.arpa`;
  let out = '';
  for (let g = 7; g >= 0; g--) {
    const v = groups[g];
    out += `${HEX[v & 15]}.${HEX[(v >>> 4) & 15]}.${HEX[(v >>> 8) & 15]}.${HEX[v >>> 12]}.`;
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
    const prefixEnd = end - IN_ADDR.length;
    const v = parseIPv4(name, 0, prefixEnd);
    if (v < 0) return null;
    // The labels are the octets in reverse order.
    return `${v & 255}.${(v >>> 8) & 255}.${(v >>> 16) & 255}.${v >>> 24}`;
  }
  if (endsWithIgnoreCase(name, end, IP6)) {
    if (end - IP6.length !== IP6_NIBBLES_LEN) return null;
    for (let g = 0; g < 8; g++) groups[g] = 0;
    for (let k = 0; k < 32; k++) {
      const pos = k * 2;
      if (k > 0 && name.charCodeAt(pos - 1) !== CH_DOT) return null;
      const h = hexValue(name.charCodeAt(pos));
      if (h < 0) return null;
      // The first label is the lowest nibble of the last group.
      const nibble = 31 - k;
      groups[nibble >>> 2] |= h << ((3 - (nibble & 3)) * 4);
    }
    return formatIPv6(true);
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
  if (parseOrThrow(ip) >= 0) return ip.replaceAll('.', '-');
  let out = formatIPv6(false).replaceAll(':', '-');
  if (out.charCodeAt(0) === 45) out = '0' + out;
  if (out.charCodeAt(out.length - 1) === 45) out += '0';
  return out;
}

/** The inverse of dashedIP: the canonical address a dashed label names, or null if it names none. */
export function ipFromDashed(label: string): string | null {
  if (typeof label !== 'string' || label.length === 0 || label.length > 63) return null;
  let dashes = 0;
  let digitsOnly = true;
  for (let i = 0; i < label.length; i++) {
    const c = label.charCodeAt(i);
    if (c === 45) dashes++;
    else if (c < CH_0 || c > CH_9) {
      digitsOnly = false;
      if (hexValue(c) < 0) return null;
    }
  }
  if (dashes === 0) return null;
  if (digitsOnly && dashes === 3) {
    const dotted = label.replaceAll('-', '.');
    if (parseIPv4(dotted, 0, dotted.length) >= 0) return dotted;
  }
  return parseIPv6(label.replaceAll('-', ':')) ? formatIPv6(true) : null;
}
