// Wire bytes -> Message. Strict: every count must be satisfied, every RDATA must be consumed
// exactly by its type's layout, and any failure throws a DnsParseError with a code.

import { Class, Flag, HEADER_SIZE, Type } from './constants.ts';
import { DnsParseError } from './errors.ts';
import { formatIPv4, formatIPv6 } from './ip.ts';
import type { Edns, EdnsOption, Message, Question, RData, ResourceRecord } from './message.ts';
import { readName } from './names.ts';
import type { Cursor } from './names.ts';

export function parseMessage(input: Uint8Array): Message {
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (buf.length < HEADER_SIZE) throw new DnsParseError('DNS_ERR_SHORT', `message of ${buf.length} bytes`, 0);
  const flags = buf.readUInt16BE(2);
  const qdcount = buf.readUInt16BE(4);
  const ancount = buf.readUInt16BE(6);
  const nscount = buf.readUInt16BE(8);
  const arcount = buf.readUInt16BE(10);
  const cur: Cursor = { pos: HEADER_SIZE };
  const questions: Question[] = [];
  for (let i = 0; i < qdcount; i++) {
    const name = readName(buf, cur, buf.length);
    need(buf, cur.pos, 4);
    questions.push({ name, type: buf.readUInt16BE(cur.pos), class: buf.readUInt16BE(cur.pos + 2) });
    cur.pos += 4;
  }
  const state: ParseState = { edns: null };
  const answers = readSection(buf, cur, ancount, null);
  const authorities = readSection(buf, cur, nscount, null);
  const additionals = readSection(buf, cur, arcount, state);
  const edns = state.edns;
  return {
    id: buf.readUInt16BE(0),
    qr: (flags & Flag.QR) !== 0,
    opcode: (flags >>> 11) & 0xf,
    aa: (flags & Flag.AA) !== 0,
    tc: (flags & Flag.TC) !== 0,
    rd: (flags & Flag.RD) !== 0,
    ra: (flags & Flag.RA) !== 0,
    ad: (flags & Flag.AD) !== 0,
    cd: (flags & Flag.CD) !== 0,
    rcode: ((edns?.extendedRcode ?? 0) << 4) | (flags & 0xf),
    questions,
    answers,
    authorities,
    additionals,
    edns,
  };
}

interface ParseState {
  edns: Edns | null;
}

function need(buf: Buffer, pos: number, n: number): void {
  if (pos + n > buf.length) throw new DnsParseError('DNS_ERR_SHORT', `need ${n} bytes at ${pos}`, pos);
}

// `state` is null outside the additional section, where an OPT record is an error.
function readSection(buf: Buffer, cur: Cursor, count: number, state: ParseState | null): ResourceRecord[] {
  const out: ResourceRecord[] = [];
  for (let i = 0; i < count; i++) {
    const start = cur.pos;
    const name = readName(buf, cur, buf.length);
    need(buf, cur.pos, 10);
    const p = cur.pos;
    const type = buf.readUInt16BE(p);
    const cls = buf.readUInt16BE(p + 2);
    const ttl = buf.readUInt32BE(p + 4);
    const rdlen = buf.readUInt16BE(p + 8);
    const rdStart = p + 10;
    const rdEnd = rdStart + rdlen;
    need(buf, rdStart, rdlen);
    if (type === Type.OPT) {
      if (state === null) throw new DnsParseError('DNS_ERR_OPT', 'OPT outside the additional section', start);
      if (state.edns !== null) throw new DnsParseError('DNS_ERR_OPT', 'more than one OPT', start);
      if (name !== '') throw new DnsParseError('DNS_ERR_OPT', 'OPT owner is not the root', start);
      state.edns = readOpt(buf, cls, ttl, rdStart, rdEnd);
    } else {
      cur.pos = rdStart;
      const data = readRdata(buf, cur, type, cls, rdEnd);
      if (cur.pos !== rdEnd) {
        throw new DnsParseError('DNS_ERR_RDATA', `RDATA of type ${type} is ${rdlen} bytes, used ${cur.pos - rdStart}`, rdStart);
      }
      out.push({ name, type, class: cls, ttl, data });
    }
    cur.pos = rdEnd;
  }
  return out;
}

function readOpt(buf: Buffer, cls: number, ttl: number, start: number, end: number): Edns {
  const options: EdnsOption[] = [];
  let p = start;
  while (p < end) {
    if (p + 4 > end) throw new DnsParseError('DNS_ERR_OPT', 'truncated EDNS option header', p);
    const code = buf.readUInt16BE(p);
    const len = buf.readUInt16BE(p + 2);
    p += 4;
    if (p + len > end) throw new DnsParseError('DNS_ERR_OPT', `EDNS option ${code} overruns the OPT`, p);
    options.push({ code, data: buf.subarray(p, p + len).slice() });
    p += len;
  }
  return {
    udpSize: cls,
    extendedRcode: ttl >>> 24,
    version: (ttl >>> 16) & 0xff,
    do: (ttl & 0x8000) !== 0,
    options,
  };
}

function rdataError(type: number, why: string, pos: number): DnsParseError {
  return new DnsParseError('DNS_ERR_RDATA', `bad RDATA for type ${type}: ${why}`, pos);
}

function fixed(cur: Cursor, type: number, n: number, end: number): number {
  const p = cur.pos;
  if (p + n > end) throw rdataError(type, `needs ${n} more bytes`, p);
  cur.pos = p + n;
  return p;
}

function charString(buf: Buffer, cur: Cursor, type: number, end: number): string {
  const p = fixed(cur, type, 1, end);
  const len = buf[p];
  fixed(cur, type, len, end);
  return buf.toString('utf8', p + 1, p + 1 + len);
}

function readRdata(buf: Buffer, cur: Cursor, type: number, cls: number, end: number): RData {
  switch (type) {
    case Type.A:
      if (cls !== Class.IN && cls !== Class.ANY) break;
      return { address: formatIPv4(buf, fixed(cur, type, 4, end)) };
    case Type.AAAA:
      return { address: formatIPv6(buf, fixed(cur, type, 16, end)) };
    case Type.NS:
    case Type.CNAME:
    case Type.PTR:
      return { target: readName(buf, cur, end) };
    case Type.MX: {
      const p = fixed(cur, type, 2, end);
      return { preference: buf.readUInt16BE(p), exchange: readName(buf, cur, end) };
    }
    case Type.SRV: {
      const p = fixed(cur, type, 6, end);
      return {
        priority: buf.readUInt16BE(p),
        weight: buf.readUInt16BE(p + 2),
        port: buf.readUInt16BE(p + 4),
        target: readName(buf, cur, end),
      };
    }
    case Type.SOA: {
      const mname = readName(buf, cur, end);
      const rname = readName(buf, cur, end);
      const p = fixed(cur, type, 20, end);
      return {
        mname,
        rname,
        serial: buf.readUInt32BE(p),
        refresh: buf.readUInt32BE(p + 4),
        retry: buf.readUInt32BE(p + 8),
        expire: buf.readUInt32BE(p + 12),
        minimum: buf.readUInt32BE(p + 16),
      };
    }
    case Type.TXT: {
      const texts: string[] = [];
      while (cur.pos < end) texts.push(charString(buf, cur, type, end));
      return { texts };
    }
    case Type.HINFO: {
      const cpu = charString(buf, cur, type, end);
      return { cpu, os: charString(buf, cur, type, end) };
    }
  }
  const p = cur.pos;
  cur.pos = end;
  return { raw: buf.subarray(p, end).slice() };
}
