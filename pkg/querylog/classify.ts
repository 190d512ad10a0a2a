// CoreDNS's response classes (plugin/pkg/response: Typify, then Classify), read from a reply's bytes
// without decoding it: which `log { class ... }` a reply belongs to.

import { HEADER_SIZE, Rcode, Type } from '../dns/constants.ts';
import { skipName } from '../dns/walk.ts';

export const ReplyClass = { success: 1, denial: 2, error: 4 } as const;

const u16 = (b: Uint8Array, o: number) => (b[o] << 8) | b[o + 1];

/** The class of the reply at reply[start..] with full rcode `rcode` to a question of type `qtype`. */
export function replyClass(reply: Uint8Array, start: number, rcode: number, qtype: number): number {
  if (qtype === Type.AXFR || qtype === Type.IXFR) return ReplyClass.error;
  const opcode = (reply[start + 2] >>> 3) & 0xf;
  if (opcode !== 0) return ReplyClass.error;
  const answers = u16(reply, start + 6);
  if (answers > 0) return rcode === Rcode.NOERROR ? ReplyClass.success : ReplyClass.error;
  // NOERROR with no answer: NODATA when the authority holds an SOA, else a delegation or a bare
  // NOERROR, both successes.
  if (rcode === Rcode.NOERROR) return authorityHasSoa(reply, start) ? ReplyClass.denial : ReplyClass.success;
  return rcode === Rcode.NXDOMAIN ? ReplyClass.denial : ReplyClass.error;
}

function authorityHasSoa(b: Uint8Array, start: number): boolean {
  let p = start + HEADER_SIZE;
  // Called with no answer records: the question, then the authority.
  for (let q = u16(b, start + 4); q > 0; q--) {
    const at = skipName(b, p);
    if (at < 0) return false;
    p = at + 4;
  }
  for (let n = u16(b, start + 8); n > 0; n--) {
    const at = skipName(b, p);
    if (at < 0 || at + 10 > b.length) return false;
    if (u16(b, at) === Type.SOA) return true;
    p = at + 10 + u16(b, at + 8);
  }
  return false;
}
