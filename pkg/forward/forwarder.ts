// Relays a client's query to upstream servers and hands back the reply bytes with the client's ID.
// Servers are tried in order, each once over UDP (and again over TCP when the reply is truncated);
// a timeout, a socket error, SERVFAIL or REFUSED moves on to the next one.

import type { Socket } from 'node:net';
import { Rcode } from '../dns/constants.ts';
import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import { ForwardError } from './errors.ts';
import { Routes } from './routes.ts';
import { tcpExchange } from './tcp.ts';
import { UdpExchanger } from './udp.ts';
import { formatUpstream, normalizeUpstream } from './upstream.ts';
import type { Upstream } from './upstream.ts';
import { headerRcode, isTruncated, questionEnd, readId, replyMismatch, writeId } from './wire.ts';

export interface ForwarderOptions {
  /** Per upstream try (UDP, and TCP after truncation). Default 2000, the original's ReadTimeout. */
  timeoutMs?: number;
  /** forward() calls allowed to wait at once; more are refused with FORWARD_OVERLOADED. Default 10_000. */
  maxInFlight?: number;
  /** UDP sockets per address family. Default 8. */
  udpSockets?: number;
  /** Queries a UDP socket carries before it is replaced by one on a new random port. Default 200. */
  udpSocketUses?: number;
  log?: Logger;
}

export interface ForwarderStats {
  /** forward() calls. */
  queries: number;
  /** Upstream tries (UDP or TCP) that got no reply in time. */
  timeouts: number;
  /** forward() calls rejected with FORWARD_ALL_FAILED. */
  failures: number;
  /** Truncated UDP replies retried over TCP. */
  tcpRetries: number;
  /** Datagrams ignored: unknown or late ID, wrong source, not a response, other question (spoofing guard). */
  mismatched: number;
  /** SERVFAIL or REFUSED replies that sent us on to the next server. */
  serverErrors: number;
  /** Sends or connections that failed at the socket level. */
  socketErrors: number;
  /** forward() calls refused because maxInFlight were already waiting. */
  overloaded: number;
}

export class Forwarder {
  readonly stats: ForwarderStats = {
    queries: 0,
    timeouts: 0,
    failures: 0,
    tcpRetries: 0,
    mismatched: 0,
    serverErrors: 0,
    socketErrors: 0,
    overloaded: 0,
  };
  private readonly timeoutMs: number;
  private readonly maxInFlight: number;
  private readonly log: Logger;
  private readonly routes = new Routes();
  private readonly udp: UdpExchanger;
  private readonly tcpSockets = new Set<Socket>();
  private inFlight = 0;
  private closed = false;

  constructor(opts: ForwarderOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.maxInFlight = opts.maxInFlight ?? 10_000;
    this.log = opts.log ?? createLogger('forward');
    this.udp = new UdpExchanger({ size: opts.udpSockets ?? 8, maxUses: opts.udpSocketUses ?? 200 }, this.stats, this.log);
  }

  /** The default route. Throws ForwardError 'FORWARD_BAD_UPSTREAM' for a host that is not an IP. */
  setUpstreams(servers: readonly Upstream[]): void {
    this.routes.setDefault(servers.map(normalizeUpstream));
  }

  /** Names at or under a domain go to its servers; the longest matching domain wins. */
  setStubDomains(stubs: ReadonlyMap<string, readonly Upstream[]>): void {
    const normalized = new Map<string, Upstream[]>();
    for (const [domain, servers] of stubs) normalized.set(domain, servers.map(normalizeUpstream));
    this.routes.setStubs(normalized);
  }

  /** The servers a name would be sent to, in the order they are tried. */
  serversFor(qname: string): Upstream[] {
    return this.routes.serversFor(qname).map((u) => ({ ...u }));
  }

  /** Queries currently waiting for an upstream. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Relays `query` (a client's complete DNS message) for `qname` and resolves with the upstream's
   * reply, carrying the client's ID. If every server answered SERVFAIL/REFUSED (or only a truncated
   * reply could be had) the last such reply is returned; with no reply at all it rejects
   * ForwardError 'FORWARD_ALL_FAILED'.
   */
  async forward(query: Uint8Array, qname: string): Promise<Uint8Array> {
    this.stats.queries++;
    if (this.closed) throw new ForwardError('FORWARD_CLOSED', 'the forwarder is closed');
    const queryEnd = questionEnd(query);
    if (queryEnd < 0) throw new ForwardError('FORWARD_BAD_QUERY', 'the query has no single readable question');
    const servers = this.routes.serversFor(qname);
    if (servers.length === 0) throw new ForwardError('FORWARD_NO_SERVERS', `no upstream servers for ${qname}`);
    if (this.inFlight >= this.maxInFlight) {
      this.stats.overloaded++;
      throw new ForwardError('FORWARD_OVERLOADED', `${this.inFlight} queries are already waiting for upstreams`);
    }

    this.inFlight++;
    try {
      const clientId = readId(query);
      // Our own copy: its ID is rewritten for every try, the caller's bytes stay as they were.
      const out = Buffer.allocUnsafe(query.length);
      out.set(query);
      let fallback: Buffer | null = null;
      for (const server of servers) {
        let reply = await this.udp.exchange(out, queryEnd, server, this.timeoutMs);
        if (this.closed) throw new ForwardError('FORWARD_CLOSED', 'the forwarder was closed');
        if (reply === null) continue;
        if (isTruncated(reply)) {
          fallback = reply; // still tells the client to come back over TCP if nothing better turns up
          this.stats.tcpRetries++;
          reply = await this.overTcp(out, queryEnd, server);
          if (this.closed) throw new ForwardError('FORWARD_CLOSED', 'the forwarder was closed');
          if (reply === null) continue;
        }
        const rcode = headerRcode(reply);
        if (rcode === Rcode.SERVFAIL || rcode === Rcode.REFUSED) {
          this.stats.serverErrors++;
          this.log.debug(2, 'upstream refused or failed, trying the next', { upstream: formatUpstream(server), rcode });
          fallback = reply;
          continue;
        }
        writeId(reply, clientId);
        return reply;
      }
      if (fallback !== null) {
        writeId(fallback, clientId);
        return fallback;
      }
      this.stats.failures++;
      throw new ForwardError('FORWARD_ALL_FAILED', `no upstream answered for ${qname}: tried ${servers.map(formatUpstream).join(', ')}`);
    } finally {
      this.inFlight--;
    }
  }

  /** Fails waiting queries with FORWARD_CLOSED and closes every socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const socket of this.tcpSockets) socket.destroy();
    await this.udp.close();
  }

  private async overTcp(query: Buffer, queryEnd: number, server: Upstream): Promise<Buffer | null> {
    const id = readId(query);
    const reply = await tcpExchange(query, server, this.timeoutMs, this.tcpSockets);
    if (reply === 'timeout' || reply === 'error') {
      if (reply === 'timeout') this.stats.timeouts++;
      else this.stats.socketErrors++;
      return null;
    }
    const why = replyMismatch(reply, id, query, queryEnd);
    if (why !== null) {
      this.stats.mismatched++;
      this.log.debug(2, 'ignored a TCP reply that does not match the query', { upstream: formatUpstream(server), reason: why });
      return null;
    }
    return reply;
  }
}
