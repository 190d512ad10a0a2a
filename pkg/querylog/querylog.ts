// CoreDNS's `log` plugin as a DnsServer reply hook: one line per reply, from the cache or not, in the
// rule's format, for the rules of the server block the name belongs to. As CoreDNS: the block is the
// one of the longest zone holding the name; its first rule whose names hold the name decides (its
// classes match: a line; they do not: none, no later rule is tried); a block without rules logs nothing.

import { HEADER_SIZE, UDP_MIN_SIZE } from '../dns/constants.ts';
import { canonicalName, inZone, readName } from '../dns/names.ts';
import { emptyOptView, readOpt } from '../dns/question.ts';
import type { ReplyHook, Transport } from '../dns/server.ts';
import { ReplyClass, replyClass } from './classify.ts';
import { Field, compileFormat } from './format.ts';
import type { LogFormat } from './format.ts';
import { LineBatch } from './lines.ts';
import { classText, rcodeText, typeText } from './names.ts';

/** One `log` rule (plain data: it crosses to answering threads). */
export interface QueryLogRule {
  /** The names it logs: canonical ('' is every name). */
  zone: string;
  /** Its format as written ({common} and {combined} allowed). */
  format: string;
  /** ReplyClass bits it logs (ALL_CLASSES: every reply). */
  classes: number;
}

/** A server block's zone and its `log` rules, in the order written. */
export interface QueryLogBlock {
  zone: string;
  rules: QueryLogRule[];
}

export const ALL_CLASSES = ReplyClass.success | ReplyClass.denial | ReplyClass.error;

interface CompiledRule {
  zone: string;
  format: LogFormat;
  classes: number;
}

/** What a line needs from the request, read once per logged reply. */
interface RequestFacts {
  name: string;
  qtype: number;
  qclass: number;
  do: boolean;
  bufsize: number;
}

const opt = emptyOptView();

function requestFacts(req: Buffer, nameEnd: number, transport: Transport): RequestFacts | null {
  if (nameEnd < HEADER_SIZE) return null;
  const name = canonicalName(readName(req, { pos: HEADER_SIZE }, req.length));
  const qEnd = nameEnd + 4;
  const hasOpt = ((req[10] << 8) | req[11]) === 1 && readOpt(req, qEnd, opt) > 0;
  const udpSize = hasOpt ? Math.max(opt.udpSize, UDP_MIN_SIZE) : UDP_MIN_SIZE;
  return { name, qtype: (req[nameEnd] << 8) | req[nameEnd + 1], qclass: (req[nameEnd + 2] << 8) | req[nameEnd + 3], do: hasOpt && opt.do, bufsize: transport === 'tcp' ? 65535 : udpSize };
}

const FLAGS: readonly [number, number, string][] = [
  [2, 0x80, 'qr'], [2, 0x04, 'aa'], [2, 0x02, 'tc'], [2, 0x01, 'rd'], [3, 0x80, 'ra'], [3, 0x40, 'z'], [3, 0x20, 'ad'], [3, 0x10, 'cd'],
];

function flagsText(reply: Buffer, start: number): string {
  let out = '';
  for (const [byte, bit, name] of FLAGS) if (reply[start + byte] & bit) out += out === '' ? name : `,${name}`;
  return out;
}

/** Seconds as CoreDNS prints a Duration's: whole nanoseconds, then `s` (0.002660244s). */
function durationText(seconds: number): string {
  const ns = Math.max(0, Math.round(seconds * 1e9));
  const frac = String(ns % 1e9).padStart(9, '0').replace(/0+$/, '');
  return `${Math.floor(ns / 1e9)}${frac === '' ? '' : `.${frac}`}s`;
}

export class QueryLog {
  private readonly blocks: { zone: string; rules: CompiledRule[] }[];
  private readonly lines: LineBatch;

  constructor(blocks: readonly QueryLogBlock[], lines = new LineBatch()) {
    // Longest zone first: the first that holds a name is its block.
    this.blocks = [...blocks]
      .sort((a, b) => b.zone.length - a.zone.length)
      .map((b) => ({ zone: b.zone, rules: b.rules.map((r) => ({ zone: r.zone, format: compileFormat(r.format), classes: r.classes })) }));
    this.lines = lines;
  }

  readonly onReply: ReplyHook = (req, nameEnd, reply, replyStart, rcode, address, port, transport, seconds) => {
    const facts = requestFacts(req, nameEnd, transport);
    const name = facts?.name ?? '';
    const rule = this.ruleFor(name);
    if (rule === undefined) return;
    if (rule.classes !== ALL_CLASSES && (rule.classes & replyClass(reply, replyStart, rcode, facts?.qtype ?? 0)) === 0) return;
    let line = '[INFO] ';
    for (const part of rule.format) {
      if (typeof part === 'string') line += part;
      else line += field(part, req, facts, reply, replyStart, rcode, address, port, transport, seconds);
    }
    this.lines.add(line);
  };

  private ruleFor(name: string): CompiledRule | undefined {
    const block = this.blocks.find((b) => inZone(b.zone, name));
    return block?.rules.find((r) => inZone(r.zone, name));
  }
}

function field(f: number, req: Buffer, facts: RequestFacts | null, reply: Buffer, replyStart: number, rcode: number, address: string, port: number, transport: Transport, seconds: number): string {
  switch (f) {
    case Field.remote: return address.includes(':') ? `[${address}]` : address;
    case Field.port: return String(port);
    case Field.id: return String((req[0] << 8) | req[1]);
    case Field.type: return facts === null ? '-' : typeText(facts.qtype);
    case Field.class: return facts === null ? '-' : classText(facts.qclass);
    case Field.name: return facts === null ? '-' : `${facts.name}.`;
    case Field.proto: return transport;
    case Field.size: return String(req.length);
    case Field.do: return String(facts?.do ?? false);
    case Field.bufsize: return String(facts?.bufsize ?? UDP_MIN_SIZE);
    case Field.rcode: return rcodeText(rcode);
    case Field.rflags: return flagsText(reply, replyStart);
    case Field.rsize: return String(reply.length - replyStart);
    case Field.duration: return durationText(seconds);
    case Field.opcode: return String((req[2] >>> 3) & 0xf);
    default: return '-';
  }
}
