// A reply template is a complete response without OPT, plus the offsets needed to finish it
// for one request: patch ID, RD, CD and the asker's question-name case, append an OPT when
// the request had one, cut it down to the request's size limit, and for an entry kept with a
// lifetime, take its age off every record's TTL.

import { HEADER_SIZE, Type, UDP_MAX_SIZE, UDP_MIN_SIZE } from './constants.ts';
import type { EncodedMessage } from './encode.ts';
import { DnsParseError } from './errors.ts';
import type { HitFrequency } from './prefetch.ts';
import { NAME_BAD_LABEL, readTtl, skipName as walkName, writeTtl } from './walk.ts';
import { B2_RD, B2_TC, B3_CD, OFF_ANCOUNT, OFF_ARCOUNT, OFF_NSCOUNT, setU16, u16 } from './header.ts';

export interface Template {
  /**
   * Header, question, answers, authorities, additional records: no OPT. Kept as a latin1 string
   * (one byte per char): a cached answer is then one heap string, where a Buffer would be a ~100-byte
   * view pinning a shared 8 KiB pool slab (see README, "Memory").
   */
  bytes: string;
  /** End of the question name (where QTYPE starts); 0 when the name must not be patched. */
  nameEnd: number;
  questionEnd: number;
  answerEnd: number;
  authorityEnd: number;
  /** Additional records in `bytes` (OPT not counted). */
  arcount: number;
  /** Full rcode; its upper bits go into the OPT. */
  rcode: number;
  /** A relayed answer's own OPT record (latin1), used instead of ours when the request had EDNS. */
  opt: string | null;
  // The offset tables below hold one offset per char (a UTF-16 code unit; a template is at most
  // 65535 bytes): 2 bytes an offset, where a small Uint32Array costs ~220 bytes of objects.
  /**
   * Where each record's TTL sits in `bytes`, ascending; set (by recordTtlOffsets) only for answers
   * cached with a lifetime, whose TTLs are served reduced by their age.
   */
  ttlOffsets: string | null;
  /**
   * Where each answer record ends, for a template that may not fit a UDP reply: the reply then keeps
   * as many whole answers as fit, with TC. null for one that always fits.
   */
  answerEnds: string | null;
  /**
   * For a template shared by every name below its question name (see sharedTemplate): where its
   * compression pointers sit. Each is moved by the bytes the asker's longer name adds. null otherwise.
   */
  pointers: string | null;
  /**
   * The length of each answer record when the answer section is two or more A (or AAAA) records of
   * one name, byte for byte alike but for their data: render() may rotate them. 0 otherwise.
   */
  rotateLength: number;
  /** The handler's Answer.tag, handed to the observer with every reply made from this template. */
  tag: number;
  /** AnswerCache's bookkeeping, on the template to save an object per entry: clock seconds when stored, */
  storedAt: number;
  /** and from which the entry is gone (NEVER_EXPIRES without a lifetime); */
  expiresAt: number;
  /** the Answer.group it was stored in (null: none), and that group's stamp then (see AnswerCache.forget). */
  group: string | null;
  stamp: number;
  /** An entry of a prefetching cache: its asks (Answer.prefetch); null for every other. */
  freq: HitFrequency | null;
}

export const NEVER_EXPIRES = -1;

const OPT_SIZE = 11;

function makeTemplate(
  b: Uint8Array,
  end: number,
  nameEnd: number,
  questionEnd: number,
  answerEnd: number,
  authorityEnd: number,
  arcount: number,
  rcode: number,
  opt: string | null,
): Template {
  // Only a template that may not fit the smallest UDP reply needs its answers' ends.
  const answerEnds = end + (opt !== null ? opt.length : OPT_SIZE) > UDP_MIN_SIZE ? recordEnds(b, questionEnd, u16(b, OFF_ANCOUNT)) : null;
  return {
    bytes: latin1(b, 0, end),
    nameEnd,
    questionEnd,
    answerEnd,
    authorityEnd,
    arcount,
    rcode,
    opt,
    ttlOffsets: null,
    answerEnds,
    pointers: null,
    rotateLength: rotatableLength(b, questionEnd, answerEnd, u16(b, OFF_ANCOUNT)),
    tag: 0,
    storedAt: 0,
    expiresAt: NEVER_EXPIRES,
    group: null,
    stamp: 0,
    freq: null,
  };
}

export function templateFromEncoded(enc: EncodedMessage, questionEnd: number, rcode: number): Template {
  const b = enc.bytes;
  return makeTemplate(b, b.length, questionEnd - 4, questionEnd, enc.answerEnd, enc.authorityEnd, u16(b, OFF_ARCOUNT), rcode, null);
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

/** Where each of `count` records from `p` ends. */
function recordEnds(buf: Uint8Array, p: number, count: number): string {
  const ends: number[] = [];
  for (let i = 0; i < count; i++) ends.push((p = skipRecord(buf, p)));
  return offsetTable(ends);
}

/**
 * The record length of an answer section whose `count` records (at least two) are all A, or all
 * AAAA, with the same name bytes, class and TTL position: what rotation may reorder without touching
 * a compression pointer. 0 for any other section.
 */
function rotatableLength(b: Uint8Array, start: number, end: number, count: number): number {
  if (count < 2) return 0;
  const len = (end - start) / count;
  if (len !== 16 && len !== 28) return 0; // a pointer name (2) + 10 + 4 or 16 bytes of address
  const type = u16(b, start + 2);
  if (type !== (len === 16 ? Type.A : Type.AAAA)) return 0;
  for (let r = start + len; r < end; r += len) {
    // Name, type and class alike (the TTLs may differ: they move with their records).
    for (let i = 0; i < 6; i++) if (b[r + i] !== b[start + i]) return 0;
  }
  return len;
}

/** Offsets (each below 65536) as one char each. */
function offsetTable(offsets: number[]): string {
  let s = '';
  for (const o of offsets) s += String.fromCharCode(o);
  return s;
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
  let opt: string | null = null;
  let extRcode = 0;
  let end = p;
  for (let i = 0; i < arTotal; i++) {
    const start = p;
    p = skipRecord(wire, p);
    const typeAt = skipName(wire, start);
    if (u16(wire, typeAt) === Type.OPT) {
      // render() patches the DO bit at a fixed offset, which needs the root owner OPT must have.
      if (typeAt !== start + 1) throw new DnsParseError('DNS_ERR_OPT', 'OPT owner is not the root', start);
      opt = latin1(wire, start, p);
      extRcode = wire[typeAt + 4];
      break;
    }
    arcount++;
    end = p;
  }
  if (opt === null) end = p;
  // A pointer in the question name means its bytes are not the asker's: never patch it.
  if (nameEnd > 0 && (wire[nameEnd - 2] & 0xc0) === 0xc0) nameEnd = 0;
  const t = makeTemplate(wire, end, nameEnd, questionEnd, answerEnd, authorityEnd, arcount, (extRcode << 4) | (wire[3] & 0xf), opt);
  // ARCOUNT without the OPT: patched in the string (the wire is the caller's).
  if (arcount !== arTotal) t.bytes = t.bytes.slice(0, OFF_ARCOUNT) + String.fromCharCode(arcount >>> 8, arcount & 0xff) + t.bytes.slice(OFF_ARCOUNT + 2);
  return t;
}

/** The offset of every record's TTL in `t.bytes` (which holds no OPT), in order. */
export function recordTtlOffsets(t: Template): string {
  const b = Buffer.from(t.bytes, 'latin1');
  const count = u16(b, OFF_ANCOUNT) + u16(b, OFF_NSCOUNT) + u16(b, OFF_ARCOUNT);
  const out: number[] = [];
  let p = t.questionEnd;
  for (let i = 0; i < count; i++) {
    out.push(skipName(b, p) + 4);
    p = skipRecord(b, p);
  }
  return offsetTable(out);
}

/** True when the template's question name equals the request's, ignoring ASCII case. */
export function sameQuestionName(t: Template, req: Uint8Array, reqNameEnd: number): boolean {
  if (t.nameEnd !== reqNameEnd) return false;
  const s = t.bytes;
  for (let i = HEADER_SIZE; i < reqNameEnd; i++) if (!sameByte(s.charCodeAt(i), req[i])) return false;
  return true;
}

/**
 * A template for a question about `encodedFor` (its question name) that serves every name below it
 * as well: the records must not mention the question name (e.g. a negative answer, whose only
 * record is its zone's SOA) and must be our encoder's (it compresses names only in owners and in NS,
 * CNAME, PTR, MX and SOA data). Answers and additional records make it unshareable: null.
 */
export function sharedTemplate(enc: EncodedMessage, questionEnd: number, rcode: number): Template | null {
  const b = enc.bytes;
  if (u16(b, OFF_ANCOUNT) !== 0 || u16(b, OFF_ARCOUNT) !== 0 || enc.truncated) return null;
  const pointers: number[] = [];
  let p = questionEnd;
  for (let i = u16(b, OFF_NSCOUNT); i > 0; i--) {
    p = namePointers(b, p, pointers);
    const type = u16(b, p);
    const rdata = p + 10;
    p = rdata + u16(b, p + 8);
    if (type === Type.NS || type === Type.CNAME || type === Type.PTR) namePointers(b, rdata, pointers);
    else if (type === Type.MX) namePointers(b, rdata + 2, pointers);
    else if (type === Type.SOA) namePointers(b, namePointers(b, rdata, pointers), pointers);
  }
  const t = templateFromEncoded(enc, questionEnd, rcode);
  t.pointers = offsetTable(pointers);
  return t;
}

/** Walks one of our encoder's names at `p`, noting where its pointer sits if it ends in one; returns the offset after it. */
function namePointers(b: Uint8Array, p: number, out: number[]): number {
  for (;;) {
    const len = b[p];
    if (len === 0) return p + 1;
    if ((len & 0xc0) === 0xc0) {
      out.push(p);
      return p + 2;
    }
    p += len + 1;
  }
}

/** Bytes as a latin1 string (one char per byte). */
function latin1(b: Uint8Array, start: number, end: number): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1', start, end);
}

/**
 * Where the last `suffixLength` bytes of the request's question name start, when they begin at a
 * label boundary (the name is below the suffix); -1 otherwise.
 */
export function suffixStart(req: Uint8Array, nameEnd: number, suffixLength: number): number {
  const target = nameEnd - suffixLength;
  let p = HEADER_SIZE;
  while (p < target) p += req[p] + 1;
  return p === target ? p : -1;
}

/** Two name bytes equal without ASCII case (a length byte is at most 63, below 'A'). */
function sameByte(x: number, y: number): boolean {
  if (x === y) return true;
  if (x >= 0x41 && x <= 0x5a) x |= 0x20;
  if (y >= 0x41 && y <= 0x5a) y |= 0x20;
  return x === y;
}

/** Set by render(): whether the last reply had to be cut with TC. */
export const renderState = { truncated: false };

/** Which rotation the next rotated reply gets: one counter for all, so consecutive askers differ. */
let turn = 0;

/**
 * Builds the reply to one request from a template. `reqNameEnd` is where the request's question
 * name ends (its bytes replace the template's when the lengths agree, or, for a shared template,
 * when it is longer), `optDo` is the request's DO bit or null when it sent no OPT, `limit` the
 * largest reply allowed, `headroom` bytes are left free at the front (2 for a TCP length prefix,
 * filled in here). `age` seconds are taken off every TTL at `t.ttlOffsets` (down to 0) in the
 * records that fit.
 *
 * Too big for `limit`: the additional records go first (no TC); if the authority records still do
 * not fit, the reply keeps as many whole answers as fit and sets TC (RFC 2181 §9), as CoreDNS, the
 * original kube-dns and dnsmasq do, so a client without TCP still gets addresses.
 */
export function render(
  t: Template,
  req: Uint8Array,
  reqNameEnd: number,
  optDo: boolean | null,
  limit: number,
  headroom: number,
  age = 0,
  rotate = false,
): Buffer {
  const withOpt = optDo !== null;
  const optLen = withOpt ? (t.opt !== null ? t.opt.length : OPT_SIZE) : 0;
  const src = t.bytes;
  // A shared template's question is its suffix; the asker's name is `grow` bytes longer.
  const shared = t.pointers !== null;
  const grow = shared ? reqNameEnd - t.nameEnd : 0;
  const room = limit - optLen - grow;
  let bodyEnd = src.length;
  let arcount = t.arcount;
  let ancount = -1;
  let tc = false;
  if (bodyEnd > room) {
    arcount = 0;
    if (t.authorityEnd <= room) bodyEnd = t.authorityEnd;
    else {
      tc = true;
      bodyEnd = t.questionEnd;
      ancount = 0;
      const ends = t.answerEnds;
      if (ends !== null) {
        while (ancount < ends.length && ends.charCodeAt(ancount) <= room) bodyEnd = ends.charCodeAt(ancount++);
      }
    }
  }
  const size = bodyEnd + grow + optLen;
  const out = Buffer.allocUnsafe(headroom + size);
  const h = headroom;
  if (h === 2) setU16(out, 0, size);
  if (!shared) out.write(src, h, bodyEnd, 'latin1');
  else {
    // Header, the asker's whole question, then the records, every pointer moved past the longer name.
    out.write(src, h, HEADER_SIZE, 'latin1');
    for (let i = HEADER_SIZE; i < reqNameEnd + 4; i++) out[h + i] = req[i];
    out.write(src.slice(t.questionEnd, bodyEnd), h + t.questionEnd + grow, 'latin1');
    const ptrs = t.pointers!;
    for (let i = 0; grow > 0 && i < ptrs.length; i++) {
      const at = h + ptrs.charCodeAt(i) + grow;
      if (at >= h + bodyEnd + grow) break;
      setU16(out, at, 0xc000 | ((u16(out, at) & 0x3fff) + grow));
    }
  }
  out[h] = req[0];
  out[h + 1] = req[1];
  out[h + 2] = (out[h + 2] & ~B2_RD) | (req[2] & B2_RD);
  out[h + 3] = (out[h + 3] & ~B3_CD) | (req[3] & B3_CD);
  if (tc) {
    out[h + 2] |= B2_TC;
    setU16(out, h + OFF_ANCOUNT, ancount);
    setU16(out, h + OFF_NSCOUNT, 0);
  }
  setU16(out, h + OFF_ARCOUNT, arcount + (withOpt ? 1 : 0));
  if (rotate && !tc && t.rotateLength > 0) rotateAnswers(out, h + t.questionEnd, h + t.answerEnd, t.rotateLength);
  if (!shared && t.nameEnd > HEADER_SIZE && t.nameEnd === reqNameEnd) {
    // A loop, not set(subarray()): the view would be one more allocation per reply.
    for (let i = HEADER_SIZE; i < reqNameEnd; i++) out[h + i] = req[i];
  }
  const ttls = t.ttlOffsets;
  if (age > 0 && ttls !== null) {
    for (let i = 0; i < ttls.length; i++) {
      const at = ttls.charCodeAt(i);
      if (at >= bodyEnd) break; // cut off with the rest of the section
      const ttl = readTtl(out, h + at);
      writeTtl(out, h + at, ttl > age ? ttl - age : 0);
    }
  }
  if (withOpt) {
    const o = h + bodyEnd + grow;
    if (t.opt !== null) {
      out.write(t.opt, o, 'latin1');
      out[o + 7] = (out[o + 7] & 0x7f) | (optDo ? 0x80 : 0); // the asker's DO, not the upstream's
    } else {
      writeOpt(out, o, t.rcode >>> 4, optDo);
    }
  }
  renderState.truncated = tc;
  return out;
}

/**
 * Round robin (CoreDNS's loadbalance): the answer records, all alike but for their data, start
 * `turn` records further on each time, so clients that take the first address spread over all of
 * them. In place, by three reversals: no allocation.
 */
function rotateAnswers(out: Buffer, start: number, end: number, len: number): void {
  const count = (end - start) / len;
  const k = turn++ % count;
  if (turn > 0x3fffffff) turn = 0;
  if (k === 0) return;
  const mid = start + k * len;
  reverse(out, start, mid);
  reverse(out, mid, end);
  reverse(out, start, end);
}

function reverse(b: Buffer, from: number, to: number): void {
  for (let i = from, j = to - 1; i < j; i++, j--) {
    const x = b[i];
    b[i] = b[j];
    b[j] = x;
  }
}

function writeOpt(out: Buffer, o: number, extRcode: number, dnssecOk: boolean): void {
  out[o] = 0;
  setU16(out, o + 1, Type.OPT);
  setU16(out, o + 3, UDP_MAX_SIZE);
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

