// Message -> wire bytes. Compresses owner names and the names inside NS, CNAME, PTR, SOA and
// MX; never SRV targets (RFC 2782). Records where each section ends so a caller can cut the
// additional section later: nothing before `authorityEnd` points past it.

import { Class, Flag, HEADER_SIZE, Type } from './constants.ts';
import { DnsEncodeError } from './errors.ts';
import { writeIPv4, writeIPv6 } from './ip.ts';
import type {
  AddressData,
  Edns,
  HinfoData,
  Message,
  MxData,
  NameData,
  RData,
  ResourceRecord,
  SoaData,
  SrvData,
  TxtData,
} from './message.ts';
import { WireWriter } from './writer.ts';

export interface EncodedMessage {
  bytes: Buffer;
  /** Offset where the answer section ends. */
  answerEnd: number;
  /** Offset where the authority section ends (the additional section, then OPT, follow). */
  authorityEnd: number;
  /** True when even answers and authorities did not fit: header + question (+ OPT) with TC. */
  truncated: boolean;
}

const w = new WireWriter();

/**
 * Encodes `msg`. When the result would exceed `maxSize`, drops the additional records (OPT
 * stays), and if that is still too big, keeps only header + question (+ OPT) with TC set.
 */
export function encodeMessage(msg: Message, maxSize = 65535): EncodedMessage {
  if (msg.rcode > 0xfff || msg.rcode < 0) throw new DnsEncodeError('DNS_ERR_RCODE', `rcode ${msg.rcode} out of range`);
  if (msg.rcode > 15 && msg.edns === null) {
    throw new DnsEncodeError('DNS_ERR_RCODE', `rcode ${msg.rcode} needs an OPT record (edns)`);
  }
  const hasOpt = msg.edns !== null;
  w.reset();
  w.ensure(HEADER_SIZE);
  w.u16(msg.id);
  w.u16(flagsWord(msg));
  w.u16(msg.questions.length);
  w.u16(msg.answers.length);
  w.u16(msg.authorities.length);
  w.u16(msg.additionals.length + (hasOpt ? 1 : 0));
  for (const q of msg.questions) {
    w.name(q.name, true);
    w.u16(q.type);
    w.u16(q.class);
  }
  const questionEnd = w.pos;
  for (const rr of msg.answers) writeRecord(rr);
  const answerEnd = w.pos;
  for (const rr of msg.authorities) writeRecord(rr);
  const authorityEnd = w.pos;
  for (const rr of msg.additionals) writeRecord(rr);
  if (hasOpt) writeOpt(msg.edns as Edns, msg.rcode);
  let truncated = false;
  if (w.pos > maxSize) {
    // Without the additional records. Names written there are never pointed at from before.
    w.pos = authorityEnd;
    if (hasOpt) writeOpt(msg.edns as Edns, msg.rcode);
    w.buf.writeUInt16BE(hasOpt ? 1 : 0, 10);
    if (w.pos > maxSize) {
      w.pos = questionEnd;
      if (hasOpt) writeOpt(msg.edns as Edns, msg.rcode);
      w.buf[2] |= Flag.TC >>> 8;
      w.buf.writeUInt32BE(0, 6);
      truncated = true;
    }
  }
  const bytes = w.finish();
  const cut = Math.min(bytes.length, questionEnd);
  return {
    bytes,
    answerEnd: truncated ? cut : answerEnd,
    authorityEnd: truncated ? cut : authorityEnd,
    truncated,
  };
}

function flagsWord(msg: Message): number {
  let f = ((msg.opcode & 0xf) << 11) | (msg.rcode & 0xf);
  if (msg.qr) f |= Flag.QR;
  if (msg.aa) f |= Flag.AA;
  if (msg.tc) f |= Flag.TC;
  if (msg.rd) f |= Flag.RD;
  if (msg.ra) f |= Flag.RA;
  if (msg.ad) f |= Flag.AD;
  if (msg.cd) f |= Flag.CD;
  return f;
}

function writeOpt(edns: Edns, rcode: number): void {
  w.ensure(11);
  w.u8(0);
  w.u16(Type.OPT);
  w.u16(edns.udpSize);
  w.u8(rcode >>> 4);
  w.u8(edns.version);
  w.u16(edns.do ? 0x8000 : 0);
  const lenAt = w.pos;
  w.u16(0);
  for (const o of edns.options) {
    w.u16(o.code);
    w.u16(o.data.length);
    w.bytes(o.data);
  }
  finishRdata(lenAt);
}

function finishRdata(lenAt: number): void {
  const len = w.pos - lenAt - 2;
  if (len > 0xffff) throw new DnsEncodeError('DNS_ERR_RDATA', `RDATA of ${len} bytes`);
  w.buf[lenAt] = len >>> 8;
  w.buf[lenAt + 1] = len & 0xff;
}

function writeRecord(rr: ResourceRecord): void {
  w.name(rr.name, true);
  w.ensure(10);
  w.u16(rr.type);
  w.u16(rr.class);
  w.u32(rr.ttl);
  const lenAt = w.pos;
  w.u16(0);
  writeRdata(rr.type, rr.class, rr.data);
  finishRdata(lenAt);
}

function writeRdata(type: number, cls: number, data: RData): void {
  if ('raw' in data) {
    w.bytes(data.raw);
    return;
  }
  switch (type) {
    case Type.A:
      if (cls !== Class.IN && cls !== Class.ANY) break; // A in other classes (CH) has other RDATA
      w.ensure(4);
      writeIPv4((data as AddressData).address, w.buf, w.pos);
      w.pos += 4;
      return;
    case Type.AAAA:
      w.ensure(16);
      writeIPv6((data as AddressData).address, w.buf, w.pos);
      w.pos += 16;
      return;
    case Type.NS:
    case Type.CNAME:
    case Type.PTR:
      w.name((data as NameData).target, true);
      return;
    case Type.MX:
      w.u16((data as MxData).preference);
      w.name((data as MxData).exchange, true);
      return;
    case Type.SRV: {
      const d = data as SrvData;
      w.u16(d.priority);
      w.u16(d.weight);
      w.u16(d.port);
      w.name(d.target, false);
      return;
    }
    case Type.SOA: {
      const d = data as SoaData;
      w.name(d.mname, true);
      w.name(d.rname, true);
      w.u32(d.serial);
      w.u32(d.refresh);
      w.u32(d.retry);
      w.u32(d.expire);
      w.u32(d.minimum);
      return;
    }
    case Type.TXT:
      for (const t of (data as TxtData).texts) w.charString(t);
      return;
    case Type.HINFO:
      w.charString((data as HinfoData).cpu);
      w.charString((data as HinfoData).os);
      return;
  }
  throw new DnsEncodeError('DNS_ERR_RDATA', `type ${type} needs raw RDATA`);
}
