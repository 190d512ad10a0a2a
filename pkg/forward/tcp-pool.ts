// TCP to an upstream for every query (node-cache's `force_tcp` to kube-dns): a few long-lived
// connections per upstream, queries pipelined on them (RFC 7766; IDs pair replies up), a connection
// closed after `idleMs` without a query. A connection per query would leave one TIME_WAIT socket per
// query on the node (1,000 queries/s exhaust the ephemeral ports in half a minute) and one conntrack
// entry each; CoreDNS's forward pools its connections for the same reason.
//
// Through a ClusterIP each new connection goes to a ready endpoint. A connection that ends while
// queries wait on it (the endpoint drained after its lame duck and closed it, or reset) gets those
// queries sent again at once on a new connection, so on another endpoint, within their try's time:
// a rollout of kube-dns costs no query a client can see.

const { createConnection } = process.getBuiltinModule('node:net');
import type { Socket } from 'node:net';
import { frame, readFrames } from '../dns/frames.ts';
import type { Logger } from '../log/log.ts';
import { randomUint16 } from './random.ts';
import type { Upstream } from './upstream.ts';
import { readId, replyMismatch, writeId } from './wire.ts';

export interface TcpPoolOptions {
  /** Connections per upstream. */
  size: number;
  /** A connection with nothing waiting for this long is closed. */
  idleMs: number;
}

export interface TcpPoolStats {
  timeouts: number;
  mismatched: number;
  socketErrors: number;
  /** Queries sent again on a new connection because theirs ended under them. */
  resent: number;
}

interface Pending {
  query: Buffer;
  queryEnd: number;
  deadline: number;
  timer?: NodeJS.Timeout;
  resolve: (reply: Buffer | null) => void;
  /** Sent again once already: a second end of its connection fails it. */
  resent: boolean;
}

class Connection {
  readonly socket: Socket;
  readonly pending = new Map<number, Pending>();
  idle: NodeJS.Timeout | undefined;
  ended = false;

  constructor(socket: Socket) {
    this.socket = socket;
  }
}

export class TcpExchanger {
  private readonly pools = new Map<Upstream, Connection[]>();
  private readonly opts: TcpPoolOptions;
  private readonly stats: TcpPoolStats;
  private readonly log: Logger;

  constructor(opts: TcpPoolOptions, stats: TcpPoolStats, log: Logger) {
    this.opts = opts;
    this.stats = stats;
    this.log = log;
  }

  /** Closes the connections of upstreams no longer configured once their queries are answered. */
  keepOnly(servers: Iterable<Upstream>): void {
    const kept = new Set(servers);
    for (const [server, pool] of this.pools) {
      if (kept.has(server)) continue;
      this.pools.delete(server);
      for (const c of pool) if (c.pending.size === 0) this.end(c);
    }
  }

  /**
   * Sends `query` (its ID overwritten) to `server` over one of its connections and resolves with the
   * matching reply, or null after `timeoutMs`, or when the connection failed twice under it.
   */
  exchange(query: Buffer, queryEnd: number, server: Upstream, timeoutMs: number): Promise<Buffer | null> {
    return new Promise((resolve) => {
      this.send(server, { query, queryEnd, deadline: performance.now() + timeoutMs, resolve, resent: false });
    });
  }

  /** Fails every waiting query and closes every connection. */
  close(): void {
    for (const pool of this.pools.values()) {
      for (const c of pool) {
        const waiting = [...c.pending.values()];
        c.pending.clear();
        this.end(c);
        for (const p of waiting) {
          clearTimeout(p.timer);
          p.resolve(null);
        }
      }
    }
    this.pools.clear();
  }

  private send(server: Upstream, p: Pending): void {
    const c = this.pick(server);
    let id = randomUint16();
    while (c.pending.has(id)) id = randomUint16();
    writeId(p.query, id);
    clearTimeout(c.idle);
    clearTimeout(p.timer);
    p.timer = setTimeout(() => {
      if (c.pending.get(id) !== p) return;
      this.stats.timeouts++;
      c.pending.delete(id);
      this.maybeIdle(c);
      p.resolve(null);
    }, Math.max(0, p.deadline - performance.now()));
    c.pending.set(id, p);
    c.socket.write(frame(p.query));
  }

  /** The connection with the fewest queries waiting, a new one while the pool has room for it. */
  private pick(server: Upstream): Connection {
    let pool = this.pools.get(server);
    if (pool === undefined) this.pools.set(server, (pool = []));
    let best: Connection | null = null;
    for (const c of pool) if (!c.ended && (best === null || c.pending.size < best.pending.size)) best = c;
    if (best !== null && (best.pending.size === 0 || pool.length >= this.opts.size)) return best;
    const c = this.open(server);
    pool.push(c);
    return c;
  }

  private open(server: Upstream): Connection {
    const c = new Connection(createConnection({ host: server.host, port: server.port, noDelay: true }));
    readFrames(c.socket, (msg) => this.onReply(c, msg));
    c.socket.on('error', (err) => {
      this.stats.socketErrors++;
      this.log.debug(1, 'upstream TCP connection failed', { err });
    });
    c.socket.on('close', () => this.closed(server, c));
    c.socket.unref(); // waiting queries' timers keep the process up
    return c;
  }

  private onReply(c: Connection, msg: Buffer): void {
    const id = msg.length >= 2 ? readId(msg) : -1;
    const p = c.pending.get(id);
    const why = p === undefined ? 'unknown-id' : replyMismatch(msg, id, p.query, p.queryEnd);
    if (why !== null) {
      this.stats.mismatched++;
      this.log.debug(2, 'ignored a TCP reply that does not match a query', { reason: why });
      return;
    }
    c.pending.delete(id);
    clearTimeout(p!.timer);
    this.maybeIdle(c);
    p!.resolve(msg);
  }

  /** The connection ended: off the pool; what waited on it goes out again once on a new connection. */
  private closed(server: Upstream, c: Connection): void {
    c.ended = true;
    clearTimeout(c.idle);
    const pool = this.pools.get(server);
    if (pool !== undefined) {
      const at = pool.indexOf(c);
      if (at >= 0) pool.splice(at, 1);
    }
    const waiting = [...c.pending.values()];
    c.pending.clear();
    for (const p of waiting) {
      if (!p.resent && pool !== undefined && p.deadline - performance.now() >= 2) {
        p.resent = true;
        this.stats.resent++;
        this.send(server, p);
      } else {
        clearTimeout(p.timer);
        p.resolve(null);
      }
    }
  }

  private maybeIdle(c: Connection): void {
    if (c.pending.size > 0 || c.ended) return;
    clearTimeout(c.idle);
    c.idle = setTimeout(() => this.end(c), this.opts.idleMs);
    c.idle.unref();
  }

  private end(c: Connection): void {
    c.ended = true;
    clearTimeout(c.idle);
    c.socket.end();
    c.socket.destroySoon();
  }
}
