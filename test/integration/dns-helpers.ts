// Shared by the dns-* integration tests: start a DnsServer on 127.0.0.1 with teardown, run the
// real dig against it, and talk raw UDP/TCP to it.

import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { promisify } from 'node:util';
import { DnsServer } from '../../pkg/dns/server.ts';
import type { DnsServerOptions } from '../../pkg/dns/server.ts';
import { encodeMessage } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message } from '../../pkg/dns/message.ts';

const run = promisify(execFile);

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startServer(t: Teardown, opts: Omit<DnsServerOptions, 'address' | 'port'>): Promise<{ server: DnsServer; port: number }> {
  const server = new DnsServer({ address: '127.0.0.1', port: 0, ...opts });
  t.teardown(() => server.close(0));
  const { port } = await server.listen();
  return { server, port };
}

/** Runs dig against the server; returns stdout (dig exits non-zero on timeouts, which rejects). */
export async function dig(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=2', ...args]);
  return stdout;
}

/** The pieces of dig's output the tests look at. */
export function digReply(out: string): { status: string; flags: string[]; answer: string[]; additional: string[]; edns: string | null } {
  const status = /status: (\w+)/.exec(out)?.[1] ?? '';
  const flags = (/;; flags: ([^;]*);/.exec(out)?.[1] ?? '').trim().split(/\s+/);
  const section = (name: string): string[] => {
    const m = new RegExp(`;; ${name} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(out);
    return m ? m[1].split('\n').filter((l) => l !== '') : [];
  };
  return { status, flags, answer: section('ANSWER'), additional: section('ADDITIONAL'), edns: /; EDNS: (.*)/.exec(out)?.[1] ?? null };
}

export function query(name: string, type: number, id: number, edit?: (m: Message) => void): Buffer {
  const m = emptyMessage(id);
  m.rd = true;
  m.questions.push({ name, type, class: 1 });
  edit?.(m);
  return encodeMessage(m).bytes;
}

/** A UDP client socket that collects every datagram it receives. */
export async function udpClient(t: Teardown): Promise<{ send(b: Uint8Array, port: number): void; next(): Promise<Buffer>; received: Buffer[] }> {
  const sock = dgram.createSocket('udp4');
  t.teardown(() => new Promise<void>((r) => sock.close(() => r())));
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const received: Buffer[] = [];
  const waiting: Array<(b: Buffer) => void> = [];
  sock.on('message', (msg) => {
    const w = waiting.shift();
    if (w) w(msg);
    else received.push(msg);
  });
  return {
    send: (b, port) => sock.send(b, port, '127.0.0.1'),
    next: () => (received.length > 0 ? Promise.resolve(received.shift() as Buffer) : new Promise((r) => waiting.push(r))),
    received,
  };
}

/** A TCP client that splits the stream into DNS messages. */
export async function tcpClient(t: Teardown, port: number): Promise<{ socket: net.Socket; messages: Buffer[]; next(): Promise<Buffer>; closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const messages: Buffer[] = [];
  const waiting: Array<(b: Buffer) => void> = [];
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const msg = pending.subarray(2, 2 + pending.readUInt16BE(0));
      pending = pending.subarray(2 + msg.length);
      const w = waiting.shift();
      if (w) w(msg);
      else messages.push(msg);
    }
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r, j) => {
    socket.once('connect', () => r());
    socket.once('error', j);
  });
  return {
    socket,
    messages,
    next: () => (messages.length > 0 ? Promise.resolve(messages.shift() as Buffer) : new Promise((r) => waiting.push(r))),
    closed,
  };
}

export function frame(msg: Uint8Array): Buffer {
  const out = Buffer.alloc(2 + msg.length);
  out.writeUInt16BE(msg.length, 0);
  out.set(msg, 2);
  return out;
}

/** Waits (bounded) for a state the server reaches on its own, e.g. after it sees a close. */
export async function eventually(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never happened: ${what}`);
}
