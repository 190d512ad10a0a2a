// The few wire-format facts the forwarder needs, read straight from the bytes: ID, flags, rcode and
// the question, so a relayed message is never decoded into objects.

import { Flag, HEADER_SIZE } from '../dns/constants.ts';
import { readQuestion } from '../dns/question.ts';
import { sameNameBytes } from '../dns/walk.ts';

export function readId(msg: Uint8Array): number {
  return (msg[0] << 8) | msg[1];
}

export function writeId(msg: Uint8Array, id: number): void {
  msg[0] = id >> 8;
  msg[1] = id & 0xff;
}

export function isResponse(msg: Uint8Array): boolean {
  return (msg[2] & (Flag.QR >> 8)) !== 0;
}

export function isTruncated(msg: Uint8Array): boolean {
  return (msg[2] & (Flag.TC >> 8)) !== 0;
}

/** The 4-bit header rcode. */
export function headerRcode(msg: Uint8Array): number {
  return msg[3] & 0x0f;
}

function qdcount(msg: Uint8Array): number {
  return (msg[4] << 8) | msg[5];
}

/**
 * The offset just past the first question (name, type, class), or -1 when the message has not
 * exactly one question or it is malformed (pkg/dns's readQuestion, which also refuses compression
 * pointers: the question name is the first name in a message, so there is nothing to point at).
 */
export function questionEnd(msg: Uint8Array): number {
  if (msg.length < HEADER_SIZE || qdcount(msg) !== 1) return -1;
  const end = readQuestion(msg, HEADER_SIZE);
  return end < 0 ? -1 : end;
}

/** Whether `reply` carries the same question as `query` (name compared ASCII case-insensitively). */
export function sameQuestion(reply: Uint8Array, query: Uint8Array, queryEnd: number): boolean {
  const end = questionEnd(reply);
  if (end !== queryEnd) return false;
  // The name without case; type and class (the last 4 bytes) exactly.
  const nameEnd = end - 4;
  if (!sameNameBytes(reply, query, HEADER_SIZE, nameEnd)) return false;
  for (let i = nameEnd; i < end; i++) if (reply[i] !== query[i]) return false;
  return true;
}

/** Why a reply to our query (sent with `id`) must be ignored, or null when it is ours. */
export function replyMismatch(reply: Uint8Array, id: number, query: Uint8Array, queryEnd: number): string | null {
  if (reply.length < HEADER_SIZE) return 'short';
  if (readId(reply) !== id) return 'id';
  if (!isResponse(reply)) return 'not-a-response';
  if (!sameQuestion(reply, query, queryEnd)) return 'question';
  return null;
}
