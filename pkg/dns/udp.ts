// The UDP side: one dgram socket; every datagram is one query.

import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Responder } from './responder.ts';
import type { SteeredQueue } from './udp-steer.ts';

export interface UdpOptions {
  onQuery(msg: Buffer, address: string, port: number, via: Responder): void;
  onError(err: unknown): void;
  recvBufferSize: number;
  /** SO_REUSEPORT (see DnsServerOptions.reusePort). */
  reusePort: boolean;
}

/**
 * We only ever send to the address a query came from, an IP literal. dgram's default lookup
 * (dns.lookup) answers literals on the next tick; answering at once saves that hop per reply
 * (measured: ~3% more replies per second on a bare echo server).
 */
function literalLookup(address: string, family: unknown, callback: (err: Error | null, address: string, family: number) => void): void {
  callback(null, address, address.includes(':') ? 6 : 4);
}

/** The libuv UDP handle's reading switch: what dgram itself calls when a socket binds and closes. */
interface Reading {
  recvStart(): number;
  recvStop(): number;
}

/**
 * dgram can stop reading a socket only by closing it; its handle, in the socket's internal state,
 * can (recvStop, then recvStart). Null where a Node.js release has moved it: a steered queue is then
 * read as before (test/integration/dns-udp-steer.test.ts fails, so an upgrade says so).
 */
function reading(s: dgram.Socket): Reading | null {
  for (const key of Object.getOwnPropertySymbols(s)) {
    if (key.description !== 'state symbol') continue;
    const handle = (s as unknown as Record<symbol, { handle?: Partial<Reading> } | undefined>)[key]?.handle;
    if (typeof handle?.recvStart === 'function' && typeof handle.recvStop === 'function') return handle as Reading;
  }
  return null;
}

/** How long close() waits for replies libuv still queues (the kernel's buffer was full). */
const CLOSE_DRAIN_MS = 1000;
/** A steered flow's queue (the kernel doubles it): a few dozen small datagrams. */
const STEERED_BUFFER_BYTES = 16 * 1024;

export class UdpListener implements Responder {
  readonly transport = 'udp';
  readonly headroom = 0;
  private readonly socket: dgram.Socket;
  private readonly opts: UdpOptions;
  private closed = false;
  /** The steered flows' sockets still open: this port's too, closed with it whoever steered them. */
  private readonly steered = new Set<() => void>();

  constructor(address: string, opts: UdpOptions) {
    this.opts = opts;
    this.socket = dgram.createSocket({ type: address.includes(':') ? 'udp6' : 'udp4', lookup: literalLookup, reusePort: opts.reusePort });
    // Whatever the socket reports (receive errors) is counted here; it must never crash us.
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

  /**
   * The receive buffer the kernel granted, in setsockopt's terms: what was asked, or less where
   * net.core.rmem_max caps it (212,992 bytes by default). Linux reports double what it grants (its
   * bookkeeping counts in that), halved here.
   */
  recvBufferBytes(): number {
    return this.socket.getRecvBufferSize() / 2;
  }

  /**
   * A queue of its own for the datagrams of `address`:`port` (udp-steer.ts): a socket bound to this
   * one's port (SO_REUSEPORT) and connected to the flow. What it reads is answered from this socket,
   * as if it had come here. Null when this socket shares no port (not bound with reusePort).
   */
  steer(address: string, port: number): SteeredQueue | null {
    if (!this.opts.reusePort || this.closed) return null;
    const local = this.socket.address();
    const s = dgram.createSocket({ type: local.family === 'IPv6' ? 'udp6' : 'udp4', lookup: literalLookup, reusePort: true });
    let open = true;
    let paused = false;
    const close = (): void => {
      if (!open) return;
      open = false;
      this.steered.delete(close);
      s.close();
    };
    const pause = (on: boolean): void => {
      if (!open || paused === on) return;
      const r = reading(s);
      if (r === null) return;
      if (on) r.recvStop();
      else r.recvStart();
      paused = on;
    };
    this.steered.add(close);
    // A flow that cannot be steered (the bind or connect refused) stays on this socket's queue.
    s.on('error', close);
    s.on('message', (msg, rinfo) => this.opts.onQuery(msg, rinfo.address, rinfo.port, this));
    s.bind({ address: local.address, port: local.port, exclusive: true }, () => {
      if (!open) return;
      try {
        s.setRecvBufferSize(STEERED_BUFFER_BYTES);
        s.connect(port, address);
      } catch {
        close();
      }
    });
    return { close, pause: () => pause(true), resume: () => pause(false) };
  }

  // No completion callback: with one, dgram queues a nextTick and an async context per reply,
  // measured at a quarter of a cache hit's user CPU (10.2 -> 7.6 us). The cost: a failed send to
  // one client (EPERM from a firewall, ENOBUFS) is not seen; there is nothing to do about it anyway.
  send(out: Buffer, port: number, address: string): void {
    if (this.closed) return;
    this.socket.send(out, port, address);
  }

  skip(): void {}

  private queuedSends(): number {
    try {
      return this.socket.getSendQueueCount();
    } catch {
      return 0; // never bound
    }
  }

  /** Closes once the replies already handed to the socket are out (libuv drops what it still queues). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A flow steered while the server drained (the fair shares' windows go on) goes too.
    for (const close of [...this.steered]) close();
    for (let waited = 0; waited < CLOSE_DRAIN_MS && this.queuedSends() > 0; waited += 5) await sleep(5);
    await new Promise<void>((resolve) => {
      try {
        this.socket.close(() => resolve());
      } catch {
        resolve(); // never bound
      }
    });
  }
}
