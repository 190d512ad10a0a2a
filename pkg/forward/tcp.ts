// One query over TCP (RFC 1035 §4.2.2: two-byte length prefix), used when a UDP reply came back
// truncated. A connection per retry: truncation is rare, and it leaves no idle connections to manage.

import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import type { Upstream } from './upstream.ts';

/** Resolves with the reply's message bytes, or why there is none. */
export function tcpExchange(
  query: Uint8Array,
  server: Upstream,
  timeoutMs: number,
  open: Set<Socket>,
): Promise<Buffer | 'timeout' | 'error'> {
  return new Promise((resolve) => {
    const framed = Buffer.allocUnsafe(query.length + 2);
    framed.writeUInt16BE(query.length, 0);
    framed.set(query, 2);

    const socket = createConnection({ host: server.host, port: server.port, noDelay: true });
    open.add(socket);
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (reply: Buffer | 'timeout' | 'error'): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      open.delete(socket);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);

    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 2) return;
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      chunks.length = 0;
      chunks.push(all);
      const length = all.readUInt16BE(0);
      if (received >= length + 2) finish(all.subarray(2, length + 2));
    });
    socket.on('error', () => finish('error'));
    socket.on('close', () => finish('error')); // closed before a whole reply
    socket.write(framed);
  });
}
