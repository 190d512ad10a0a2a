// One query over TCP (RFC 1035 §4.2.2: two-byte length prefix), used when a UDP reply came back
// truncated. A connection per retry: truncation is rare, and it leaves no idle connections to manage.

const { createConnection } = process.getBuiltinModule('node:net');
import type { Socket } from 'node:net';
import { frame, readFrames } from '../dns/frames.ts';
import type { Upstream } from './upstream.ts';

/** Resolves with the reply's message bytes, or why there is none. */
export function tcpExchange(
  query: Uint8Array,
  server: Upstream,
  timeoutMs: number,
  open: Set<Socket>,
): Promise<Buffer | 'timeout' | 'error'> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: server.host, port: server.port, noDelay: true });
    open.add(socket);
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

    // The first whole message is the reply; the forwarder checks it is ours.
    readFrames(socket, finish);
    socket.on('error', () => finish('error'));
    socket.on('close', () => finish('error')); // closed before a whole reply
    socket.write(frame(query));
  });
}
