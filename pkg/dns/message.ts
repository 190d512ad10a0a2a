// The decoded form of a DNS message. Names are presentation strings WITHOUT the trailing dot
// ("kubernetes.default.svc.cluster.local"; the root is ""), case as on the wire; a label holding
// '.' or '\\' or a byte outside 0x21-0x7e is written with RFC 1035 escapes (\. \\ \DDD).

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface AddressData {
  /** A: dotted quad; AAAA: any textual IPv6 form on input, canonical (RFC 5952) on output. */
  address: string;
}
export interface NameData {
  /** CNAME, PTR, NS. */
  target: string;
}
export interface SrvData {
  priority: number;
  weight: number;
  port: number;
  target: string;
}
export interface SoaData {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}
export interface TxtData {
  /** Each string is one <character-string> (at most 255 bytes once UTF-8 encoded). */
  texts: string[];
}
export interface HinfoData {
  cpu: string;
  os: string;
}
export interface MxData {
  preference: number;
  exchange: string;
}
/** Any type we do not interpret: RDATA kept as bytes (RFC 3597). */
export interface RawData {
  raw: Uint8Array;
}

export type RData = AddressData | NameData | SrvData | SoaData | TxtData | HinfoData | MxData | RawData;

export interface ResourceRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  data: RData;
}

export interface EdnsOption {
  code: number;
  data: Uint8Array;
}

/** The OPT pseudo-record (RFC 6891), kept out of `additionals`. */
export interface Edns {
  udpSize: number;
  version: number;
  /** DNSSEC OK bit. */
  do: boolean;
  /** Upper 8 bits of the 12-bit rcode, as on the wire. */
  extendedRcode: number;
  options: EdnsOption[];
}

export interface Message {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  ad: boolean;
  cd: boolean;
  /** Full rcode; values above 15 need `edns` and are split into header + OPT on encode. */
  rcode: number;
  questions: Question[];
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
  edns: Edns | null;
}

/** A fresh message with every flag clear and every section empty. */
export function emptyMessage(id = 0): Message {
  return {
    id,
    qr: false,
    opcode: 0,
    aa: false,
    tc: false,
    rd: false,
    ra: false,
    ad: false,
    cd: false,
    rcode: 0,
    questions: [],
    answers: [],
    authorities: [],
    additionals: [],
    edns: null,
  };
}
