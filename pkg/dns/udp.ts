// The UDP side: one dgram socket; every datagram is one query.

import dgram from 'node:dgram';
import type { Responder } from './responder.ts';

export interface UdpOptions {
  onQuery(msg: Buffer, address: string, port: number, via: Responder): void;
  onError(err: unknown): void;
  recvBufferSize: number;
}

export class UdpListener implements Responder {
  readonly transport = 'udp';
  readonly headroom = 0;
  private readonly socket: dgram.Socket;
  private readonly opts: UdpOptions;
  private closed = false;

  constructor(address: string, opts: UdpOptions) {
    this.opts = opts;
    this.socket = dgram.createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
    // Send failures (EHOSTUNREACH, a full buffer...) surface here; they must never crash us.
    this.socket.on('error', (err) => opts.onError(err));
    this.socket.on('message', (msg, rinfo) => opts.onQuery(msg, rinfo.address, rinfo.port, this));
  }

  bind(address: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.socket.once('error', onError);
      this.socket.bind({ address, port, exclusive: true }, () => {
        this.socket.off('error', onError);
        try {
          this.socket.setRecvBufferSize(this.opts.recvBufferSize);
        } catch {
          // Bounded by net.core.rmem_max or not permitted: the default buffer still works.
        }
        resolve(this.socket.address().port);
      });
    });
  }

  send(out: Buffer, port: number, address: string): void {
    if (!this.closed) this.socket.send(out, port, address);
  }

  skip(): void {}

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((resolve) => {
      try {
        this.socket.close(() => resolve());
      } catch {
        resolve(); // never bound
      }
    });
  }
}
