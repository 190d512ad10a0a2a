// Raw DNS clients on 127.0.0.1 for sending bytes dig would never send, and for watching what comes
// back message by message. Closed in t.teardown.

import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Test } from 'tap';
import { splitFrames } from './tcp-frames.ts';

/** Messages in arrival order; `next()` takes the oldest unread one, waiting if there is none. */
interface Inbox {
  push(msg: Buffer): void;
  next(): Promise<Buffer>;
  /** Arrived and not yet taken by `next()`. */
  received: Buffer[];
}

function inbox(): Inbox {
  const received: Buffer[] = [];
  const waiting: Array<(msg: Buffer) => void> = [];
  return {
    received,
    push(msg) {
      const w = waiting.shift();
      if (w) w(msg);
      else received.push(msg);
    },
    next: () => (received.length > 0 ? Promise.resolve(received.shift() as Buffer) : new Promise((r) => waiting.push(r))),
  };
}

export interface UdpClient {
  send(msg: Uint8Array, port: number): void;
  next(): Promise<Buffer>;
  /** Datagrams not yet taken by `next()`. */
  received: Buffer[];
}

/** A UDP socket that collects every datagram it receives. */
export async function udpClient(t: Test): Promise<UdpClient> {
  const sock = createSocket('udp4');
  t.teardown(() => new Promise<void>((r) => sock.close(() => r())));
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const box = inbox();
  sock.on('message', (msg) => box.push(msg));
  return { send: (msg, port) => sock.send(msg, port, '127.0.0.1'), next: box.next, received: box.received };
}

export interface TcpClient {
  socket: Socket;
  next(): Promise<Buffer>;
  /** Messages not yet taken by `next()`. */
  messages: Buffer[];
  /** Resolves when the connection has closed (either side). */
  closed: Promise<void>;
}

/** A TCP connection to 127.0.0.1:`port` that splits what it reads into DNS messages. */
export async function tcpClient(t: Test, port: number): Promise<TcpClient> {
  const socket = connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const box = inbox();
  splitFrames(socket, box.push);
  socket.on('error', () => {}); // a reset by the server shows as `closed`, which tests await
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r, j) => {
    socket.once('connect', () => r());
    socket.once('error', j);
  });
  return { socket, next: box.next, messages: box.received, closed };
}

/**
 * Sends `queries` over one UDP socket, at most `window` unanswered at a time, and returns the replies
 * in arrival order. Bounded: it stops waiting `ms` after the last reply came.
 */
export async function askAll(t: Test, port: number, queries: readonly Uint8Array[], window = 100, ms = 3000): Promise<Buffer[]> {
  const client = await udpClient(t);
  const replies: Buffer[] = [];
  let sent = 0;
  while (replies.length < queries.length) {
    while (sent < queries.length && sent - replies.length < window) client.send(queries[sent++], port);
    const next = await Promise.race([client.next(), new Promise<null>((r) => setTimeout(r, ms, null))]);
    if (next === null) break;
    replies.push(next);
  }
  return replies;
}
