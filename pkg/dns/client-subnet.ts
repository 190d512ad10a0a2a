// EDNS Client Subnet (RFC 7871). As the server reads and answers it: the request's option as a
// ClientSubnet for the handler, and the OPT record that carries it back with an answer's scope (only
// answers scoped to the asker carry it: RFC 7871 §7.3, none means valid for every asker). As a
// forwarder sends it: the asker's address put into a query, the scope read from the reply, and the
// option taken out again before the reply goes back to an asker that did not send it.

import { Type, UDP_MAX_SIZE } from './constants.ts';
import { OFF_ANCOUNT, OFF_ARCOUNT, OFF_NSCOUNT, OFF_QDCOUNT, setU16, u16 } from './header.ts';
import { formatIPv4, formatIPv6, parseIPv4, parseIPv6 } from './ip.ts';
import { skipName } from './walk.ts';
import { OPTION_ECS } from './question.ts';
import type { OptView } from './question.ts';

export interface ClientSubnet {
  /** 1 IPv4, 2 IPv6 (RFC 7871's FAMILY). */
  family: 1 | 2;
  sourcePrefix: number;
  /**
   * The address bytes as the request carried them: the prefix's, rounded up to whole bytes (4 for a
   * /32); the rest of the address is zero. Kept as bytes: the server echoes them, autopath reads an
   * IPv4 number from them; text only where a person reads it (clientSubnetText).
   */
  address: Uint8Array;
}

/** The Client Subnet readOpt found in `req`, or null. */
export function clientSubnetOf(req: Uint8Array, view: OptView): ClientSubnet | null {
  if (view.ecsFamily === 0) return null;
  const address = req.slice(view.ecsAddressAt, view.ecsAddressAt + view.ecsAddressLength);
  return { family: view.ecsFamily as 1 | 2, sourcePrefix: view.ecsSourcePrefix, address };
}

/** `10.1.2.0/24`, `fd00:1::5/128`: a Client Subnet as text, for logs and tests. */
export function clientSubnetText(s: ClientSubnet): string {
  const full = new Uint8Array(16);
  full.set(s.address);
  return `${s.family === 1 ? formatIPv4(full, 0) : formatIPv6(full, 0, false)}/${s.sourcePrefix}`;
}

/** An OPT record (latin1, as Template.opt) echoing `subnet` with `scope`; `rcode` the full rcode. */
export function clientSubnetOpt(subnet: ClientSubnet, scope: number, rcode: number): string {
  const addressLength = (subnet.sourcePrefix + 7) >>> 3;
  const optionLength = 4 + addressLength;
  const out = Buffer.alloc(11 + 4 + optionLength);
  out.writeUInt16BE(Type.OPT, 1);
  out.writeUInt16BE(UDP_MAX_SIZE, 3);
  out[5] = rcode >>> 4;
  out.writeUInt16BE(4 + optionLength, 9);
  out.writeUInt16BE(OPTION_ECS, 11);
  out.writeUInt16BE(optionLength, 13);
  out.writeUInt16BE(subnet.family, 15);
  out[17] = subnet.sourcePrefix;
  out[18] = Math.min(scope, subnet.family === 1 ? 32 : 128);
  out.set(subnet.address.subarray(0, addressLength), 19);
  return out.toString('latin1');
}

/** Where the OPT record of a message is: [start, end) and where its RDATA starts; null without one. */
function findOpt(wire: Uint8Array): { start: number; rdata: number; end: number } | null {
  if (wire.length < 12) return null;
  let off = 12;
  for (let i = u16(wire, OFF_QDCOUNT); i > 0; i--) {
    off = skipName(wire, off);
    if (off < 0) return null;
    off += 4;
  }
  const records = u16(wire, OFF_ANCOUNT) + u16(wire, OFF_NSCOUNT) + u16(wire, OFF_ARCOUNT);
  for (let i = 0; i < records; i++) {
    const start = off;
    off = skipName(wire, off);
    if (off < 0 || off + 10 > wire.length) return null;
    const end = off + 10 + u16(wire, off + 8);
    if (end > wire.length) return null;
    if (u16(wire, off) === Type.OPT) return { start, rdata: off + 10, end };
    off = end;
  }
  return null;
}

/**
 * `wire` with the OPT at [start, end) holding its options but Client Subnet and then `room` bytes for
 * the caller to write, just before what followed the OPT (its fixed part kept). One buffer from the
 * pool, nothing else made (an ArrayBuffer of its own per message, four a miss, had tripled the
 * collector's work per miss).
 */
function withoutClientSubnet(wire: Uint8Array, opt: { start: number; rdata: number; end: number }, room: number): Buffer {
  const tail = wire.length - opt.end;
  const out = Buffer.allocUnsafe(opt.end + room + tail);
  out.set(wire.subarray(0, opt.rdata), 0);
  let at = opt.rdata;
  for (let p = opt.rdata; p + 4 <= opt.end; ) {
    const next = p + 4 + u16(wire, p + 2);
    if (u16(wire, p) !== OPTION_ECS) {
      const stop = Math.min(next, opt.end);
      out.set(wire.subarray(p, stop), at);
      at += stop - p;
    }
    p = next;
  }
  setU16(out, opt.rdata - 2, at - opt.rdata + room);
  out.set(wire.subarray(opt.end), at + room);
  return out.subarray(0, at + room + tail);
}

/** withClientSubnet's address, parsed: one buffer for every call (it is copied out at once). */
const addressBytes = new Uint8Array(16);

/** Writes a Client Subnet option for addressBytes' first `length` bytes (the whole address) at `at` of `out`. */
function writeClientSubnet(out: Uint8Array, at: number, family: 1 | 2, length: number): void {
  setU16(out, at, OPTION_ECS);
  setU16(out, at + 2, 4 + length);
  setU16(out, at + 4, family);
  out[at + 6] = length * 8;
  out[at + 7] = 0; // SCOPE PREFIX-LENGTH: 0 in a query
  out.set(addressBytes.subarray(0, length), at + 8);
}

/**
 * A query with the asker's whole address as its Client Subnet (/32 or /128), replacing any the
 * asker sent; an OPT is added when the query has none. null when `address` is not an IP address.
 */
export function withClientSubnet(query: Uint8Array, address: string): Uint8Array | null {
  const v4 = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  let family: 1 | 2;
  if (parseIPv4(v4, 0, v4.length, addressBytes, 0)) family = 1;
  else if (parseIPv6(address, addressBytes, 0)) family = 2;
  else return null;
  const length = family === 1 ? 4 : 16;
  const opt = findOpt(query);
  if (opt !== null) {
    const out = withoutClientSubnet(query, opt, 8 + length);
    writeClientSubnet(out, out.length - (query.length - opt.end) - (8 + length), family, length);
    return out;
  }
  // No OPT (glibc's and musl's queries): the query, then an OPT holding the option alone, in one buffer.
  const out = Buffer.allocUnsafe(query.length + 11 + 8 + length);
  out.set(query, 0);
  setU16(out, OFF_ARCOUNT, u16(query, OFF_ARCOUNT) + 1);
  const at = query.length;
  // The OPT record: root name, type, UDP size, extended RCODE/version/flags 0, the option's length.
  out.fill(0, at, at + 11);
  setU16(out, at + 1, Type.OPT);
  setU16(out, at + 3, UDP_MAX_SIZE);
  setU16(out, at + 9, 8 + length);
  writeClientSubnet(out, at + 11, family, length);
  return out;
}

/**
 * A reply's Client Subnet SCOPE (-1 without one) and the reply without the option (the same bytes
 * when it has none), from one walk of the message. `addedOpt`: the OPT was ours (withClientSubnet
 * gave a query without one its own): its whole record is taken out, the reply as the asker's own query
 * would have had it (one with an extended RCODE keeps its OPT), so that it takes the same way through
 * the DnsServer as any reply without an OPT.
 */
export function takeClientSubnet(reply: Uint8Array, addedOpt = false): { scope: number; wire: Uint8Array } {
  const opt = findOpt(reply);
  if (opt === null) return { scope: -1, wire: reply };
  let scope = -1;
  for (let p = opt.rdata; p + 4 <= opt.end; p += 4 + u16(reply, p + 2)) {
    if (u16(reply, p) === OPTION_ECS && p + 8 <= opt.end) scope = reply[p + 7];
  }
  // The OPT's TTL field (6 bytes before its RDATA) begins with the extended RCODE.
  if (addedOpt && reply[opt.rdata - 6] === 0) return { scope, wire: withoutRecord(reply, opt) };
  return { scope, wire: scope < 0 ? reply : withoutClientSubnet(reply, opt, 0) };
}

/** `wire` without the additional record at [start, end), in one buffer from the pool. */
function withoutRecord(wire: Uint8Array, r: { start: number; end: number }): Buffer {
  const out = Buffer.allocUnsafe(wire.length - (r.end - r.start));
  out.set(wire.subarray(0, r.start), 0);
  out.set(wire.subarray(r.end), r.start);
  setU16(out, OFF_ARCOUNT, u16(wire, OFF_ARCOUNT) - 1);
  return out;
}
