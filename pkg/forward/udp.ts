// UDP exchanges with upstreams over a small pool of unconnected sockets, each bound to port 0 (so the
// kernel picks a random source port) and replaced after `maxUses` queries.
//
// The trade-off: a fresh socket per query would give every query its own random port (the most
// spoofing resistance, RFC 5452) at the price of a socket, a bind and a close per query; a few
// long-lived sockets are cheapest but let a peer that sees one query learn the port for all later
// ones. A pool of `size` sockets recycled every `maxUses` queries keeps ~size×16 bits of guessing
// (port × ID) in front of an attacker while costing one bind per `maxUses` queries.
//
// Replies are matched on the socket they arrive at by ID; a reply is accepted only from the address
// and port the query went to, with QR=1 and the same question. Everything else is counted and dropped.

import { createSocket } from 'node:dgram';
import type { RemoteInfo, Socket } from 'node:dgram';
import type { Logger } from '../log/log.ts';
import { randomUint16 } from './random.ts';
import type { Upstream } from './upstream.ts';
import { readId, replyMismatch, writeId } from './wire.ts';

export interface UdpStats {
  timeouts: number;
  mismatched: number;
  socketErrors: number;
}

interface Pending {
  server: Upstream;
  query: Uint8Array;
  queryEnd: number;
  timer: NodeJS.Timeout;
  resolve: (reply: Buffer | null) => void;
}

class PooledSocket {
  readonly socket: Socket;
  readonly pending = new Map<number, Pending>();
  uses = 0;
  retired = false;
  closed = false;

  constructor(socket: Socket) {
    this.socket = socket;
  }
}

export interface UdpPoolOptions {
  /** Sockets per address family. */
  size: number;
  /** Queries a socket carries before it is replaced. */
  maxUses: number;
}

export class UdpExchanger {
  private readonly pools: Record<'udp4' | 'udp6', (PooledSocket | undefined)[]>;
  private readonly opts: UdpPoolOptions;
  private readonly stats: UdpStats;
  private readonly log: Logger;
  private readonly closing = new Set<Promise<void>>();

  constructor(opts: UdpPoolOptions, stats: UdpStats, log: Logger) {
    this.opts = opts;
    this.stats = stats;
    this.log = log;
    this.pools = { udp4: new Array(opts.size), udp6: new Array(opts.size) };
  }

  /**
   * Sends `query` (whose ID is overwritten with a fresh random one) to `server` and resolves with
   * the matching reply, or null after a timeout or a socket error (both counted).
   */
  exchange(query: Uint8Array, queryEnd: number, server: Upstream, timeoutMs: number): Promise<Buffer | null> {
    const ps = this.pick(server.host.includes(':') ? 'udp6' : 'udp4');
    let id = randomUint16();
    while (ps.pending.has(id)) id = randomUint16();
    writeId(query, id);
    ps.uses++;
    return new Promise((resolve) => {
      const pending: Pending = {
        server,
        query,
        queryEnd,
        resolve,
        timer: setTimeout(() => {
          this.stats.timeouts++;
          this.finish(ps, id, null);
        }, timeoutMs),
      };
      ps.pending.set(id, pending);
      ps.socket.send(query, server.port, server.host, (err) => {
        if (err && ps.pending.get(id) === pending) {
          this.stats.socketErrors++;
          this.log.debug(1, 'send to upstream failed', { upstream: server.host, port: server.port, err });
          this.finish(ps, id, null);
        }
      });
    });
  }

  /** Fails every waiting exchange and closes every socket. */
  async close(): Promise<void> {
    for (const pool of Object.values(this.pools)) {
      for (let i = 0; i < pool.length; i++) {
        const ps = pool[i];
        if (ps === undefined) continue;
        pool[i] = undefined;
        ps.retired = true;
        for (const id of [...ps.pending.keys()]) this.finish(ps, id, null);
        this.closeSocket(ps);
      }
    }
    await Promise.all(this.closing);
  }

  private finish(ps: PooledSocket, id: number, reply: Buffer | null): void {
    const pending = ps.pending.get(id);
    if (pending === undefined) return;
    ps.pending.delete(id);
    clearTimeout(pending.timer);
    if (ps.retired && ps.pending.size === 0) this.closeSocket(ps);
    pending.resolve(reply);
  }

  private pick(family: 'udp4' | 'udp6'): PooledSocket {
    const pool = this.pools[family];
    const slot = randomUint16() % pool.length;
    let ps = pool[slot];
    if (ps !== undefined && ps.uses >= this.opts.maxUses) {
      this.retire(ps);
      ps = undefined;
    }
    if (ps === undefined) {
      ps = this.open(family);
      pool[slot] = ps;
    }
    return ps;
  }

  private open(family: 'udp4' | 'udp6'): PooledSocket {
    const socket = createSocket({ type: family });
    const ps = new PooledSocket(socket);
    socket.on('message', (msg, rinfo) => this.onMessage(ps, msg, rinfo));
    socket.on('error', (err) => {
      this.stats.socketErrors++;
      this.log.warn('upstream socket failed, replacing it', { family, err });
      this.retire(ps);
      for (const id of [...ps.pending.keys()]) this.finish(ps, id, null);
    });
    // Unbound until now; sends issued while binding are queued by Node.
    socket.bind({ port: 0, exclusive: true });
    socket.unref(); // pending timers keep the process up while queries are out
    return ps;
  }

  private onMessage(ps: PooledSocket, msg: Buffer, rinfo: RemoteInfo): void {
    const id = msg.length >= 2 ? readId(msg) : -1;
    const pending = ps.pending.get(id);
    const why =
      pending === undefined
        ? 'unknown-id'
        : rinfo.port !== pending.server.port || rinfo.address !== pending.server.host
          ? 'source'
          : replyMismatch(msg, id, pending.query, pending.queryEnd);
    if (why !== null) {
      this.stats.mismatched++;
      this.log.debug(2, 'ignored a reply that does not match a query', { from: rinfo.address, port: rinfo.port, reason: why });
      return;
    }
    this.finish(ps, id, msg);
  }

  private retire(ps: PooledSocket): void {
    ps.retired = true;
    for (const pool of Object.values(this.pools)) {
      const at = pool.indexOf(ps);
      if (at >= 0) pool[at] = undefined;
    }
    if (ps.pending.size === 0) this.closeSocket(ps);
  }

  private closeSocket(ps: PooledSocket): void {
    if (ps.closed) return;
    ps.closed = true;
    const done = new Promise<void>((resolve) => {
      try {
        ps.socket.close(() => resolve());
      } catch {
        resolve(); // already closed after an error
      }
    });
    this.closing.add(done);
    void done.then(() => this.closing.delete(done));
  }
}
