// DNS over TCP for a client: each message behind a two-byte length (RFC 1035 4.2.2, RFC 7766). The
// server side reads frames itself (tcp.ts), with backpressure and limits a client does not need.

import type { Socket } from 'node:net';

/** `msg` behind its length prefix, ready to write to a TCP stream. */
export function frame(msg: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(2 + msg.length);
  out.writeUInt16BE(msg.length, 0);
  out.set(msg, 2);
  return out;
}

/** Calls `onMessage` with each whole message that arrives on `socket`, however the stream is cut. */
export function readFrames(socket: Socket, onMessage: (msg: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const msg = pending.subarray(2, 2 + pending.readUInt16BE(0));
      pending = pending.subarray(2 + msg.length);
      onMessage(msg);
    }
  });
}
