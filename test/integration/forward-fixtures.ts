// Real upstream DNS servers on 127.0.0.1 for the forwarder's tests, and queries/answers built with
// dns2's Packet (an independent codec, so the forwarder is not checked against its own reading).
import { createSocket } from 'node:dgram';
import type { RemoteInfo, Socket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import type { Test } from 'tap';
import { Packet } from 'dns2';

export const TYPE_A = Packet.TYPE.A as number;

/** A client's query as bytes. */
export function makeQuery(name: string, id: number, type = TYPE_A): Buffer {
  const p = new Packet();
  p.header.id = id;
  p.header.rd = 1;
  p.questions.push({ name, type, class: Packet.CLASS.IN });
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
  res.questions = [{ name: opts.name ?? q.name, type: opts.type ?? q.type, class: q.class }];
  for (const address of opts.addresses ?? []) {
    res.answers.push({ name: q.name, type: TYPE_A, class: Packet.CLASS.IN, ttl: 60, address });
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
    addresses: p.answers.filter((a: { type: number }) => a.type === TYPE_A).map((a: { address: string }) => a.address),
  };
}

export type UdpHandler = (msg: Buffer, rinfo: RemoteInfo, send: (reply: Buffer) => void) => void;

export interface UdpUpstream {
  host: string;
  port: number;
  socket: Socket;
  /** Query IDs in arrival order. */
  ids: number[];
}

/** A UDP server on 127.0.0.1; `handler` decides what (if anything) to send back. */
export async function udpUpstream(t: Test, handler: UdpHandler, port = 0): Promise<UdpUpstream> {
  const socket = createSocket('udp4');
  const ids: number[] = [];
  socket.on('message', (msg, rinfo) => {
    ids.push(msg.readUInt16BE(0));
    handler(msg, rinfo, (reply) => socket.send(reply, rinfo.port, rinfo.address));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve());
  });
  t.teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { host: '127.0.0.1', port: socket.address().port, socket, ids };
}

/** An upstream that reads queries and never answers. */
export function blackhole(t: Test): Promise<UdpUpstream> {
  return udpUpstream(t, () => {});
}

/** A UDP upstream answering every query with `opts`. */
export function answering(t: Test, opts: AnswerOptions): Promise<UdpUpstream> {
  return udpUpstream(t, (msg, _rinfo, send) => send(makeAnswer(msg, opts)));
}

/** A TCP DNS server (length-prefixed) on 127.0.0.1:`port`. */
export async function tcpUpstream(t: Test, port: number, answer: (query: Buffer) => Buffer): Promise<Server> {
  const server = createServer((conn) => {
    let buf = Buffer.alloc(0);
    conn.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const query = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + query.length);
        const reply = answer(query);
        const framed = Buffer.alloc(2 + reply.length);
        framed.writeUInt16BE(reply.length, 0);
        reply.copy(framed, 2);
        conn.write(framed);
      }
    });
    conn.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}
