// A CIDR written where CoreDNS takes a zone (`kubernetes cluster.local 10.0.0.0/8`): the reverse zones
// it stands for, as CoreDNS expands it (plugin/pkg/cidr: split on octet or nibble boundaries, each part
// reversed): 10.0.0.0/8 → 10.in-addr.arpa; 172.16.0.0/12 → 16.172.in-addr.arpa ... 31.172.in-addr.arpa.

import { parseIPv4, parseIPv6 } from '../dns/ip.ts';

/** The reverse zones (lowercase, no trailing dot) of `text`, or null when it is no CIDR. */
export function cidrReverseZones(text: string): string[] | null {
  const m = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(text);
  if (m === null) return null;
  const v6 = m[1].includes(':');
  const bytes = new Uint8Array(v6 ? 16 : 4);
  if (!(v6 ? parseIPv6(m[1], bytes, 0) : parseIPv4(m[1], 0, m[1].length, bytes, 0))) return null;
  const bits = Number(m[2]);
  const step = v6 ? 4 : 8;
  if (bits > bytes.length * 8) return null;
  // Digits of the address: octets (IPv4) or nibbles (IPv6).
  const digits = v6 ? [...bytes].flatMap((b) => [b >> 4, b & 15]) : [...bytes];
  const whole = Math.ceil(bits / step);
  const spare = whole * step - bits;
  const zones: string[] = [];
  for (let i = 0; i < 2 ** spare; i++) {
    const d = digits.slice(0, whole);
    if (whole > 0) d[whole - 1] = (d[whole - 1] & ~(2 ** spare - 1)) + i;
    const labels = d.reverse().map((x) => (v6 ? x.toString(16) : String(x)));
    zones.push([...labels, v6 ? 'ip6.arpa' : 'in-addr.arpa'].join('.'));
  }
  return zones;
}
