// Scripted upstream DNS servers on 127.0.0.1 for the forwarder's tests: each decides per query what
// (if anything) to send back. Closed in t.teardown.

import { createSocket } from 'node:dgram';
import type { RemoteInfo, Socket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import type { Test } from 'tap';
import { makeAnswer } from './packets.ts';
import type { AnswerOptions } from './packets.ts';
import { frame, splitFrames } from './tcp-frames.ts';

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

/** A TCP DNS server on 127.0.0.1:`port` replying to each query with `answer(query)`. */
export async function tcpUpstream(t: Test, port: number, answer: (query: Buffer) => Buffer): Promise<Server> {
  const server = createServer((conn) => {
    splitFrames(conn, (query) => conn.write(frame(answer(query))));
    conn.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

/**
 * A UDP upstream that truncates every reply and, when `tcpAnswer` is given, a TCP server on the same
 * port answering in full. Port 0 picks a free UDP port whose TCP twin may be taken: then another.
 */
export async function truncatingUpstream(t: Test, tcpAnswer?: (query: Buffer) => Buffer): Promise<UdpUpstream> {
  for (let attempt = 0; ; attempt++) {
    const udp = await udpUpstream(t, (msg, _r, send) => send(makeAnswer(msg, { tc: true })));
    if (tcpAnswer === undefined) return udp;
    try {
      await tcpUpstream(t, udp.port, tcpAnswer);
      return udp;
    } catch (err) {
      if (attempt > 20) throw err;
    }
  }
}
