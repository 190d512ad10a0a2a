// Queries and answers built and read with dns2's Packet: an independent codec, so code under test is
// not checked against its own reading of the wire.

import { Packet } from 'dns2';

export const TYPE_A = Packet.TYPE.A as number;

/** A client's query as bytes. */
export function makeQuery(name: string, id: number, type = TYPE_A): Buffer {
  const p = new Packet();
  p.header.id = id;
  p.header.rd = 1;
  p.questions.push(new Packet.Question(name, type, Packet.CLASS.IN));
  return p.toBuffer();
}

export interface AnswerOptions {
  addresses?: string[];
  rcode?: number;
  tc?: boolean;
  /** Overrides, for spoofed replies. */
  id?: number;
  qr?: boolean;
  name?: string;
  type?: number;
  /** Of every answer record; default 60. */
  ttl?: number;
}

/** A reply to `query` (as an upstream would send it), A records for each address. */
export function makeAnswer(query: Buffer, opts: AnswerOptions = {}): Buffer {
  const req = Packet.parse(query);
  const res = Packet.createResponseFromRequest(req);
  res.header.ra = 1;
  res.header.rcode = opts.rcode ?? 0;
  if (opts.tc) res.header.tc = 1;
  if (opts.id !== undefined) res.header.id = opts.id;
  if (opts.qr === false) res.header.qr = 0;
  const q = req.questions[0];
  res.questions = [new Packet.Question(opts.name ?? q.name, opts.type ?? q.type, q.class)];
  for (const address of opts.addresses ?? []) {
    res.answers.push(new Packet.Resource({ name: q.name, type: TYPE_A, class: Packet.CLASS.IN, ttl: opts.ttl ?? 60, address }));
  }
  return res.toBuffer();
}

/** The A addresses and rcode of a reply, read with dns2. */
export function readAnswer(reply: Uint8Array): { id: number; rcode: number; tc: boolean; addresses: string[] } {
  const p = Packet.parse(Buffer.from(reply));
  return {
    id: p.header.id,
    rcode: p.header.rcode,
    tc: p.header.tc === 1,
    addresses: p.answers.flatMap((a) => (a.type === TYPE_A && a.address !== undefined ? [a.address] : [])),
  };
}
