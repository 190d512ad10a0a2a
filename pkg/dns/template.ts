// A reply template is a complete response without OPT, plus the offsets needed to finish it
// for one request: patch ID, RD, CD and the asker's question-name case, append an OPT when
// the request had one, cut it down to the request's size limit, and for an entry kept with a
// lifetime, take its age off every record's TTL.

import { HEADER_SIZE, Type } from './constants.ts';
import type { EncodedMessage } from './encode.ts';
import { DnsParseError } from './errors.ts';
import { NAME_BAD_LABEL, readTtl, sameNameBytes, skipName as walkName, writeTtl } from './walk.ts';
import { B2_RD, B2_TC, B3_CD, OFF_ANCOUNT, OFF_ARCOUNT, OFF_NSCOUNT, setU16, u16 } from './header.ts';

export interface Template {
  /** Header, question, answers, authorities, additional records: no OPT. */
  bytes: Buffer;
  /** End of the question name (where QTYPE starts); 0 when the name must not be patched. */
  nameEnd: number;
  questionEnd: number;
  answerEnd: number;
  authorityEnd: number;
  /** Additional records in `bytes` (OPT not counted). */
  arcount: number;
  /** Full rcode; its upper bits go into the OPT. */
  rcode: number;
  /** A relayed answer's own OPT record, used instead of ours when the request had EDNS. */
  opt: Buffer | null;
  /**
   * Where each record's TTL sits in `bytes`, ascending; set (by recordTtlOffsets) only for answers
   * cached with a lifetime, whose TTLs are served reduced by their age.
   */
  ttlOffsets: Uint32Array | null;
}

/** The UDP payload size we advertise in OPT. */
const OUR_UDP_SIZE = 4096;
const OPT_SIZE = 11;

export function templateFromEncoded(enc: EncodedMessage, questionEnd: number, rcode: number): Template {
  return {
    bytes: enc.bytes,
    nameEnd: questionEnd - 4,
    questionEnd,
    answerEnd: enc.answerEnd,
    authorityEnd: enc.authorityEnd,
    arcount: u16(enc.bytes, OFF_ARCOUNT),
    rcode,
    opt: null,
    ttlOffsets: null,
  };
}

// walk.ts's skipName, failing with the parse error a relayed answer deserves.
function skipName(buf: Uint8Array, p: number): number {
  const end = walkName(buf, p);
  if (end === NAME_BAD_LABEL) throw new DnsParseError('DNS_ERR_LABEL', 'bad label type', p);
  if (end < 0) throw new DnsParseError('DNS_ERR_SHORT', 'name runs past the end', p);
  return end;
}

function skipRecord(buf: Uint8Array, p: number): number {
  p = skipName(buf, p);
  if (p + 10 > buf.length) throw new DnsParseError('DNS_ERR_SHORT', 'record header runs past the end', p);
  const end = p + 10 + u16(buf, p + 8);
  if (end > buf.length) throw new DnsParseError('DNS_ERR_SHORT', 'RDATA runs past the end', p);
  return end;
}

/**
 * Makes a template from a complete response (e.g. relayed from an upstream) by walking its
 * sections without decoding them. An OPT record is taken out (records after it are dropped:
 * OPT comes last in practice, and splicing would break pointers into what follows).
 */
export function templateFromWire(wire: Uint8Array): Template {
  if (wire.length < HEADER_SIZE) throw new DnsParseError('DNS_ERR_SHORT', 'relayed answer under 12 bytes', 0);
  const qd = u16(wire, 4);
  let p = HEADER_SIZE;
  let nameEnd = 0;
  for (let i = 0; i < qd; i++) {
    p = skipName(wire, p);
    if (i === 0 && qd === 1) nameEnd = p;
    p += 4;
    if (p > wire.length) throw new DnsParseError('DNS_ERR_SHORT', 'question runs past the end', p);
  }
  const questionEnd = p;
  for (let i = u16(wire, OFF_ANCOUNT); i > 0; i--) p = skipRecord(wire, p);
  const answerEnd = p;
  for (let i = u16(wire, OFF_NSCOUNT); i > 0; i--) p = skipRecord(wire, p);
  const authorityEnd = p;
  const arTotal = u16(wire, OFF_ARCOUNT);
  let arcount = 0;
  let opt: Buffer | null = null;
  let extRcode = 0;
  let end = p;
  for (let i = 0; i < arTotal; i++) {
    const start = p;
    p = skipRecord(wire, p);
    const typeAt = skipName(wire, start);
    if (u16(wire, typeAt) === Type.OPT) {
      // render() patches the DO bit at a fixed offset, which needs the root owner OPT must have.
      if (typeAt !== start + 1) throw new DnsParseError('DNS_ERR_OPT', 'OPT owner is not the root', start);
      opt = Buffer.from(wire.subarray(start, p));
      extRcode = wire[typeAt + 4];
      break;
    }
    arcount++;
    end = p;
  }
  if (opt === null) end = p;
  const bytes = Buffer.from(wire.subarray(0, end));
  setU16(bytes, OFF_ARCOUNT, arcount);
  // A pointer in the question name means its bytes are not the asker's: never patch it.
  if (nameEnd > 0 && (bytes[nameEnd - 2] & 0xc0) === 0xc0) nameEnd = 0;
  return {
    bytes,
    nameEnd: nameEnd > 0 ? nameEnd : 0,
    questionEnd,
    answerEnd,
    authorityEnd,
    arcount,
    rcode: (extRcode << 4) | (bytes[3] & 0xf),
    opt,
    ttlOffsets: null,
  };
}

/** The offset of every record's TTL in `t.bytes` (which holds no OPT), in order. */
export function recordTtlOffsets(t: Template): Uint32Array {
  const b = t.bytes;
  const count = u16(b, OFF_ANCOUNT) + u16(b, OFF_NSCOUNT) + u16(b, OFF_ARCOUNT);
  const out = new Uint32Array(count);
  let p = t.questionEnd;
  for (let i = 0; i < count; i++) {
    out[i] = skipName(b, p) + 4;
    p = skipRecord(b, p);
  }
  return out;
}

/** True when the template's question name equals the request's, ignoring ASCII case. */
export function sameQuestionName(t: Template, req: Uint8Array, reqNameEnd: number): boolean {
  return t.nameEnd === reqNameEnd && sameNameBytes(t.bytes, req, HEADER_SIZE, reqNameEnd);
}

/** Set by render(): whether the last reply had to be cut to header + question with TC. */
export const renderState = { truncated: false };

/**
 * Builds the reply to one request from a template. `reqNameEnd` is where the request's question
 * name ends (its bytes replace the template's when the lengths agree), `optDo` is the request's
 * DO bit or null when it sent no OPT, `limit` the largest reply allowed, `headroom` bytes are
 * left free at the front (2 for a TCP length prefix, filled in here). `age` seconds are taken off
 * every TTL at `t.ttlOffsets` (down to 0) in the records that fit.
 */
export function render(
  t: Template,
  req: Uint8Array,
  reqNameEnd: number,
  optDo: boolean | null,
  limit: number,
  headroom: number,
  age = 0,
): Buffer {
  const withOpt = optDo !== null;
  const optLen = withOpt ? (t.opt !== null ? t.opt.length : OPT_SIZE) : 0;
  const src = t.bytes;
  let bodyEnd = src.length;
  let arcount = t.arcount;
  let tc = false;
  if (bodyEnd + optLen > limit) {
    arcount = 0;
    if (t.authorityEnd + optLen <= limit) bodyEnd = t.authorityEnd;
    else {
      bodyEnd = t.questionEnd;
      tc = true;
    }
  }
  const size = bodyEnd + optLen;
  const out = Buffer.allocUnsafe(headroom + size);
  if (headroom === 2) setU16(out, 0, size);
  src.copy(out, headroom, 0, bodyEnd);
  const h = headroom;
  out[h] = req[0];
  out[h + 1] = req[1];
  out[h + 2] = (out[h + 2] & ~B2_RD) | (req[2] & B2_RD);
  out[h + 3] = (out[h + 3] & ~B3_CD) | (req[3] & B3_CD);
  if (tc) {
    out[h + 2] |= B2_TC;
    out.fill(0, h + OFF_ANCOUNT, h + OFF_ARCOUNT);
  }
  setU16(out, h + OFF_ARCOUNT, arcount + (withOpt ? 1 : 0));
  if (t.nameEnd > HEADER_SIZE && t.nameEnd === reqNameEnd) {
    // A loop, not set(subarray()): the view would be one more allocation per reply.
    for (let i = HEADER_SIZE; i < reqNameEnd; i++) out[h + i] = req[i];
  }
  const ttls = t.ttlOffsets;
  if (age > 0 && ttls !== null) {
    for (let i = 0; i < ttls.length; i++) {
      const at = ttls[i];
      if (at >= bodyEnd) break; // cut off with the rest of the section
      const ttl = readTtl(src, at);
      writeTtl(out, h + at, ttl > age ? ttl - age : 0);
    }
  }
  if (withOpt) {
    const o = h + bodyEnd;
    if (t.opt !== null) {
      t.opt.copy(out, o);
      out[o + 7] = (out[o + 7] & 0x7f) | (optDo ? 0x80 : 0); // the asker's DO, not the upstream's
    } else {
      writeOpt(out, o, t.rcode >>> 4, optDo);
    }
  }
  renderState.truncated = tc;
  return out;
}

function writeOpt(out: Buffer, o: number, extRcode: number, dnssecOk: boolean): void {
  out[o] = 0;
  setU16(out, o + 1, Type.OPT);
  setU16(out, o + 3, OUR_UDP_SIZE);
  out[o + 5] = extRcode;
  out[o + 6] = 0;
  out[o + 7] = dnssecOk ? 0x80 : 0;
  out[o + 8] = 0;
  out[o + 9] = 0;
  out[o + 10] = 0;
}

/**
 * A header-only error reply (FORMERR, NOTIMP, BADVERS, ...) built straight from the request:
 * same ID, opcode, RD and CD; the question echoed when `questionEnd` > 12; an OPT when `optDo`
 * is not null (BADVERS needs one to carry its upper rcode bits).
 */
export function errorReply(req: Uint8Array, rcode: number, questionEnd: number, optDo: boolean | null, headroom: number): Buffer {
  const qEnd = questionEnd > HEADER_SIZE ? questionEnd : HEADER_SIZE;
  const size = qEnd + (optDo !== null ? OPT_SIZE : 0);
  const out = Buffer.allocUnsafe(headroom + size);
  if (headroom === 2) setU16(out, 0, size);
  const h = headroom;
  out[h] = req[0];
  out[h + 1] = req[1];
  out[h + 2] = 0x80 | (req[2] & 0x78) | (req[2] & B2_RD);
  out[h + 3] = (req[3] & B3_CD) | (rcode & 0xf);
  setU16(out, h + 4, qEnd > HEADER_SIZE ? 1 : 0);
  out.fill(0, h + 6, h + 10);
  setU16(out, h + OFF_ARCOUNT, optDo !== null ? 1 : 0);
  if (qEnd > HEADER_SIZE) out.set(req.subarray(HEADER_SIZE, qEnd), h + HEADER_SIZE);
  if (optDo !== null) writeOpt(out, h + qEnd, rcode >>> 4, optDo);
  return out;
}

