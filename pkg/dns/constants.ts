// DNS wire constants (RFC 1035, 2782, 3596, 6891, 8482). Plain objects, not enums, so that the
// sources stay erasable TypeScript and run under Node's type stripping.

export const Type = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
} as const;

export const Class = {
  IN: 1,
  CH: 3,
  NONE: 254,
  ANY: 255,
} as const;

export const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
} as const;

export const Opcode = {
  QUERY: 0,
  IQUERY: 1,
  STATUS: 2,
  NOTIFY: 4,
  UPDATE: 5,
} as const;

/** Bits of the 16-bit flags word (header bytes 2-3). */
export const Flag = {
  QR: 0x8000,
  AA: 0x0400,
  TC: 0x0200,
  RD: 0x0100,
  RA: 0x0080,
  AD: 0x0020,
  CD: 0x0010,
} as const;

export const HEADER_SIZE = 12;
/** Largest UDP answer without EDNS (RFC 1035 §4.2.1). */
export const UDP_MIN_SIZE = 512;
/** Largest UDP payload we advertise and honour (RFC 6891 §6.2.5 suggests 4096 as a ceiling). */
export const UDP_MAX_SIZE = 4096;
export const MAX_NAME_LENGTH = 255;
export const MAX_LABEL_LENGTH = 63;

const typeNames = new Map<number, string>(Object.entries(Type).map(([k, v]) => [v, k]));
const rcodeNames = new Map<number, string>(Object.entries(Rcode).map(([k, v]) => [v, k]));

/** "A", "SRV", ... or "TYPE<n>" (RFC 3597 presentation) for types we have no name for. */
export function typeName(type: number): string {
  return typeNames.get(type) ?? `TYPE${type}`;
}

export function rcodeName(rcode: number): string {
  return rcodeNames.get(rcode) ?? `RCODE${rcode}`;
}
