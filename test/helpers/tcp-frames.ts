// DNS over TCP carries each message behind a two-byte length (RFC 1035 4.2.2, RFC 7766). One
// framer and one splitter for every test that speaks TCP, client side or server side.

import type { Socket } from 'node:net';

/** `msg` with its length prefix, ready to write to a TCP stream. */
export function frame(msg: Uint8Array): Buffer {
  const out = Buffer.alloc(2 + msg.length);
  out.writeUInt16BE(msg.length, 0);
  out.set(msg, 2);
  return out;
}

/** Calls `onMessage` with each whole message that arrives on `socket`, however the stream is cut. */
export function splitFrames(socket: Socket, onMessage: (msg: Buffer) => void): void {
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
