// UDP exchanges with upstreams over small pools of sockets, each connected to one upstream and bound
// to port 0 (so the kernel picks a random source port), replaced after `maxUses` queries.
//
// The trade-off: a fresh socket per query would give every query its own random port (the most
// spoofing resistance, RFC 5452) at the price of a socket, a bind and a close per query; a few
// long-lived sockets are cheapest but let a peer that sees one query learn the port for all later
// ones. A pool of `size` sockets per upstream recycled every `maxUses` queries keeps ~size×16 bits of
// guessing (port × ID) in front of an attacker while costing one bind per `maxUses` queries.
//
// Connected, because only a connected UDP socket hears the kernel's ICMP port unreachable (as
// ECONNREFUSED): a closed upstream port then ends the wait at once instead of after the timeout, the
// same way dnsmasq and glibc learn it. The kernel also drops datagrams from any other source.
//
// Replies are matched on the socket they arrive at by ID (the kernel has already dropped whatever did
// not come from the socket's upstream); a reply is accepted only with QR=1 and the same question.
// Everything else is counted and dropped.

import { createSocket } from 'node:dgram';
import type { RemoteInfo, Socket } from 'node:dgram';
import type { Logger } from '../log/log.ts';
import { randomUint16 } from './random.ts';
import type { Upstream } from './upstream.ts';
import { readId, replyMismatch, writeId } from './wire.ts';

export interface UdpStats {
  timeouts: number;
  /** Tries ended by an ICMP port unreachable (ECONNREFUSED): nothing listens on the server's port. */
  refused: number;
  mismatched: number;
  socketErrors: number;
}

interface Pending {
  query: Uint8Array;
  queryEnd: number;
  timer: NodeJS.Timeout;
  resolve: (reply: Buffer | null) => void;
}

class PooledSocket {
  readonly socket: Socket;
  readonly pending = new Map<number, Pending>();
  /** IDs of the queries waiting for the connect (a send before it throws); null once connected. */
  unsent: number[] | null = [];
  uses = 0;
  retired = false;
  closed = false;

  constructor(socket: Socket) {
    this.socket = socket;
  }
}

type Pool = (PooledSocket | undefined)[];

export interface UdpPoolOptions {
  /** Sockets per upstream. */
  size: number;
  /** Queries a socket carries before it is replaced. */
  maxUses: number;
}

export class UdpExchanger {
  /** One pool per upstream (the forwarder's interned server objects). */
  private pools = new Map<Upstream, Pool>();
  private readonly opts: UdpPoolOptions;
  private readonly stats: UdpStats;
  private readonly log: Logger;
  private readonly closing = new Set<Promise<void>>();

  constructor(opts: UdpPoolOptions, stats: UdpStats, log: Logger) {
    this.opts = opts;
    this.stats = stats;
    this.log = log;
  }

  /** Retires the pools of upstreams no longer configured (their waiting queries still finish). */
  keepOnly(servers: Iterable<Upstream>): void {
    const kept = new Map<Upstream, Pool>();
    for (const server of servers) {
      const pool = this.pools.get(server);
      if (pool !== undefined) kept.set(server, pool);
    }
    for (const [server, pool] of this.pools) if (!kept.has(server)) for (const ps of pool) if (ps !== undefined) this.retire(ps);
    this.pools = kept;
  }

  /**
   * Sends `query` (whose ID is overwritten with a fresh random one) to `server` and resolves with
   * the matching reply, or null after a timeout, a refusal or a socket error (each counted).
   * `server` is compared by identity: pass the same object for the same upstream.
   */
  exchange(query: Uint8Array, queryEnd: number, server: Upstream, timeoutMs: number): Promise<Buffer | null> {
    const ps = this.pick(server);
    let id = randomUint16();
    while (ps.pending.has(id)) id = randomUint16();
    writeId(query, id);
    ps.uses++;
    return new Promise((resolve) => {
      const pending: Pending = {
        query,
        queryEnd,
        resolve,
        timer: setTimeout(() => {
          this.stats.timeouts++;
          this.finish(ps, id, null);
        }, timeoutMs),
      };
      ps.pending.set(id, pending);
      if (ps.unsent !== null) ps.unsent.push(id);
      else this.send(ps, id, pending);
    });
  }

  private send(ps: PooledSocket, id: number, pending: Pending): void {
    ps.socket.send(pending.query, (err) => {
      if (err && ps.pending.get(id) === pending) this.failed(ps, err);
    });
  }

  /**
   * A refusal (the kernel's ICMP port unreachable, reported on the next receive or send) fails every
   * query waiting on the socket: all went to the same closed port. Any other error is the socket's.
   */
  private failed(ps: PooledSocket, err: Error): void {
    const waiting = [...ps.pending.keys()];
    if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
      this.stats.refused += waiting.length;
    } else {
      this.stats.socketErrors++;
      // A server we cannot send to (no route) fails every query that picks it: not a line each.
      const syscall = (err as NodeJS.ErrnoException).syscall;
      if (syscall === 'connect' || syscall === 'send') this.log.debug(1, 'cannot send to upstream', { err });
      else this.log.warn('upstream socket failed, replacing it', { err });
      this.retire(ps);
    }
    for (const id of waiting) this.finish(ps, id, null);
  }

  /** Fails every waiting exchange and closes every socket. */
  async close(): Promise<void> {
    for (const pool of this.pools.values()) {
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

  private pick(server: Upstream): PooledSocket {
    let pool = this.pools.get(server);
    if (pool === undefined) {
      pool = new Array<PooledSocket | undefined>(this.opts.size);
      this.pools.set(server, pool);
    }
    const slot = randomUint16() % pool.length;
    let ps = pool[slot];
    if (ps !== undefined && ps.uses >= this.opts.maxUses) {
      this.retire(ps);
      ps = undefined;
    }
    if (ps === undefined) {
      ps = this.open(server);
      pool[slot] = ps;
    }
    return ps;
  }

  private open(server: Upstream): PooledSocket {
    const socket = createSocket({ type: server.host.includes(':') ? 'udp6' : 'udp4' });
    const ps = new PooledSocket(socket);
    socket.on('message', (msg, rinfo) => this.onMessage(ps, msg, rinfo));
    socket.on('error', (err) => this.failed(ps, err));
    // connect() binds port 0 first; sends wait for it (Node throws on a send while connecting). A
    // failed connect (no route to the server: ENETUNREACH) comes to this callback, not as 'error'.
    socket.connect(server.port, server.host, (err?: Error) => {
      if (err) return this.failed(ps, err);
      const unsent = ps.unsent ?? [];
      ps.unsent = null;
      for (const id of unsent) {
        const pending = ps.pending.get(id);
        if (pending !== undefined && !ps.closed) this.send(ps, id, pending);
      }
    });
    socket.unref(); // pending timers keep the process up while queries are out
    return ps;
  }

  /** The source needs no check: the kernel delivers to a connected socket only what its server sent. */
  private onMessage(ps: PooledSocket, msg: Buffer, rinfo: RemoteInfo): void {
    const id = msg.length >= 2 ? readId(msg) : -1;
    const pending = ps.pending.get(id);
    const why = pending === undefined ? 'unknown-id' : replyMismatch(msg, id, pending.query, pending.queryEnd);
    if (why !== null) {
      this.stats.mismatched++;
      this.log.debug(2, 'ignored a reply that does not match a query', { from: rinfo.address, port: rinfo.port, reason: why });
      return;
    }
    this.finish(ps, id, msg);
  }

  private retire(ps: PooledSocket): void {
    ps.retired = true;
    for (const pool of this.pools.values()) {
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
