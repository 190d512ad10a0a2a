// The presentation names CoreDNS's log prints (miekg/dns's tables): types, classes and rcodes by
// number, `TYPE<n>` / `CLASS<n>` / the number itself for those it has no name for.

const TYPES: Record<number, string> = {
  1: 'A', 2: 'NS', 3: 'MD', 4: 'MF', 5: 'CNAME', 6: 'SOA', 7: 'MB', 8: 'MG', 9: 'MR', 10: 'NULL', 12: 'PTR', 13: 'HINFO', 14: 'MINFO',
  15: 'MX', 16: 'TXT', 17: 'RP', 18: 'AFSDB', 19: 'X25', 20: 'ISDN', 21: 'RT', 23: 'NSAPPTR', 24: 'SIG', 25: 'KEY', 26: 'PX', 27: 'GPOS',
  28: 'AAAA', 29: 'LOC', 30: 'NXT', 31: 'EID', 32: 'NIMLOC', 33: 'SRV', 34: 'ATMA', 35: 'NAPTR', 36: 'KX', 37: 'CERT', 39: 'DNAME',
  41: 'OPT', 42: 'APL', 43: 'DS', 44: 'SSHFP', 45: 'IPSECKEY', 46: 'RRSIG', 47: 'NSEC', 48: 'DNSKEY', 49: 'DHCID', 50: 'NSEC3',
  51: 'NSEC3PARAM', 52: 'TLSA', 53: 'SMIMEA', 55: 'HIP', 56: 'NINFO', 57: 'RKEY', 58: 'TALINK', 59: 'CDS', 60: 'CDNSKEY',
  61: 'OPENPGPKEY', 62: 'CSYNC', 63: 'ZONEMD', 64: 'SVCB', 65: 'HTTPS', 99: 'SPF', 100: 'UINFO', 101: 'UID', 102: 'GID', 103: 'UNSPEC',
  104: 'NID', 105: 'L32', 106: 'L64', 107: 'LP', 108: 'EUI48', 109: 'EUI64', 249: 'TKEY', 250: 'TSIG', 251: 'IXFR', 252: 'AXFR',
  253: 'MAILB', 254: 'MAILA', 255: 'ANY', 256: 'URI', 257: 'CAA', 258: 'AVC', 260: 'AMTRELAY', 32768: 'TA', 32769: 'DLV',
};

const CLASSES: Record<number, string> = { 1: 'IN', 2: 'CS', 3: 'CH', 4: 'HS', 254: 'NONE', 255: 'ANY' };

const RCODES: Record<number, string> = {
  0: 'NOERROR', 1: 'FORMERR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 4: 'NOTIMP', 5: 'REFUSED', 6: 'YXDOMAIN', 7: 'YXRRSET', 8: 'NXRRSET',
  9: 'NOTAUTH', 10: 'NOTZONE', 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 19: 'BADMODE', 20: 'BADNAME', 21: 'BADALG', 22: 'BADTRUNC',
  23: 'BADCOOKIE',
};

export const typeText = (t: number): string => TYPES[t] ?? `TYPE${t}`;
export const classText = (c: number): string => CLASSES[c] ?? `CLASS${c}`;
export const rcodeText = (r: number): string => RCODES[r] ?? String(r);

const byName = (table: Record<number, string>) => new Map(Object.entries(table).map(([n, s]) => [s, Number(n)]));
const TYPE_NUMBERS = byName(TYPES);
const CLASS_NUMBERS = byName(CLASSES);
const RCODE_NUMBERS = byName(RCODES);

/** The number of a type, class or rcode named as miekg/dns names it (`A`, `IN`, `NXDOMAIN`); undefined for none. */
export const typeNumber = (name: string): number | undefined => TYPE_NUMBERS.get(name.toUpperCase());
export const classNumber = (name: string): number | undefined => CLASS_NUMBERS.get(name.toUpperCase());
export const rcodeNumber = (name: string): number | undefined => RCODE_NUMBERS.get(name.toUpperCase());
