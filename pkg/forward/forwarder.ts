// Relays a client's query to upstream servers and hands back the reply bytes with the client's ID.
// Servers are tried in order, each once over UDP (and again over TCP when the reply is truncated);
// a timeout, a socket error, SERVFAIL or REFUSED moves on to the next one. Each upstream address
// keeps its own counters (servers.ts), for dnsmasq's servers.bind.

import type { Socket } from 'node:net';
import { Rcode } from '../dns/constants.ts';
import { isLoopback } from '../dns/ip.ts';
import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import { ForwardError } from './errors.ts';
import { HealthChecks } from './health.ts';
import type { HealthOptions } from './health.ts';
import { Routes } from './routes.ts';
import { ServerSet, serverKey } from './servers.ts';
import type { ReplyStats, ServerStats, UpstreamServer } from './servers.ts';
import { tcpExchange } from './tcp.ts';
import { UdpExchanger } from './udp.ts';
import { TcpExchanger } from './tcp-pool.ts';
import { formatUpstream, normalizeUpstream } from './upstream.ts';
import type { Upstream } from './upstream.ts';
import { headerRcode, isTruncated, questionEnd, readId, replyMismatch, writeId } from './wire.ts';

/** forceTcp: connections per upstream, and how long one may sit idle (CoreDNS's forward expires them after 10 s). */
const TCP_CONNECTIONS = 4;
const TCP_IDLE_MS = 10_000;

export interface ForwarderOptions {
  /** Per upstream try (UDP, and TCP after truncation). Default 2000, the original's ReadTimeout. */
  timeoutMs?: number;
  /** forward() calls allowed to wait at once; more are refused with FORWARD_OVERLOADED. Default 10_000. */
  maxInFlight?: number;
  /** UDP sockets per upstream. Default 8. */
  udpSockets?: number;
  /** Queries a UDP socket carries before it is replaced by one on a new random port. Default 200. */
  udpSocketUses?: number;
  /** Every query over TCP, on pooled connections (CoreDNS's force_tcp; tcp-pool.ts). Default false. */
  forceTcp?: boolean;
  /** forceTcp: a pooled connection idle this long is closed (CoreDNS's expire). Default 10 s. */
  tcpIdleMs?: number;
  /**
   * Which server of a route is tried first (CoreDNS's policy); the rest follow in the route's order,
   * wrapping. `sequential` (the default: dnsmasq's and kube-dns's way): the first; `random`: any;
   * `round_robin`: the next one each time.
   */
  policy?: ForwardPolicy;
  /**
   * A stub domain's own policy (a Corefile's block of that zone), asked for each stub domain (lowercase,
   * no trailing dot) whenever the routes are set; undefined: `policy`.
   */
  stubPolicy?: (domain: string) => ForwardPolicy | undefined;
  /** Upstreams marked down and probed (CoreDNS's max_fails and health_check; health.ts). Default: none. */
  health?: HealthOptions;
  /**
   * The servers an asker's address may be passed to (takesAsker): by default those on loopback, the
   * kube-dns beside a pod's dnscache; node-cache names the cluster DNS Service's address.
   */
  takesAskerAt?: (host: string) => boolean;
  log?: Logger;
}

export type ForwardPolicy = 'sequential' | 'random' | 'round_robin';

export interface ForwarderStats {
  /** forward() calls. */
  queries: number;
  /** Upstream tries (UDP or TCP) that got no reply in time. */
  timeouts: number;
  /** UDP tries ended at once by an ICMP port unreachable: nothing listens on the server's port. */
  refused: number;
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
  /** forceTcp: queries sent again on a new connection because theirs ended under them. */
  resent: number;
  /** Queries that found every server of their route down (health) and tried them all the same. */
  healthcheckBroken: number;
}

export class Forwarder {
  readonly stats: ForwarderStats = {
    queries: 0,
    timeouts: 0,
    refused: 0,
    failures: 0,
    tcpRetries: 0,
    mismatched: 0,
    serverErrors: 0,
    socketErrors: 0,
    overloaded: 0,
    resent: 0,
    healthcheckBroken: 0,
  };
  private readonly timeoutMs: number;
  private readonly maxInFlight: number;
  private readonly log: Logger;
  private readonly routes = new Routes<UpstreamServer>();
  /** The routes whose every server may be passed an asker's address (takesAsker), found once per install, not per query. */
  private askerRoutes = new WeakSet<readonly UpstreamServer[]>();
  private readonly takesAskerAt: (host: string) => boolean;
  /** Every configured address, default route first, then the stub domains' in the order given. */
  private servers: ReadonlyMap<string, UpstreamServer> = new Map();
  private defaultConfig: readonly Upstream[] = [];
  private stubConfig: ReadonlyMap<string, readonly Upstream[]> = new Map();
  private exceptedConfig: readonly string[] = [];
  private readonly udp: UdpExchanger;
  /** forceTcp's connections; null without it. */
  private readonly tcp: TcpExchanger | null;
  private readonly tcpSockets = new Set<Socket>();
  private inFlight = 0;
  private closed = false;
  private readonly policy: ForwardPolicy;
  private readonly stubPolicy: (domain: string) => ForwardPolicy | undefined;
  /** Routes whose policy is not `policy` (a stub domain's own). */
  private routePolicies = new WeakMap<readonly UpstreamServer[], ForwardPolicy>();
  private turn = 0;
  private readonly health: HealthChecks | null;

  constructor(opts: ForwarderOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.maxInFlight = opts.maxInFlight ?? 10_000;
    this.log = opts.log ?? createLogger('forward');
    this.udp = new UdpExchanger({ size: opts.udpSockets ?? 8, maxUses: opts.udpSocketUses ?? 200 }, this.stats, this.log);
    this.tcp = opts.forceTcp ? new TcpExchanger({ size: TCP_CONNECTIONS, idleMs: opts.tcpIdleMs ?? TCP_IDLE_MS }, this.stats, this.log) : null;
    this.policy = opts.policy ?? 'sequential';
    this.stubPolicy = opts.stubPolicy ?? (() => undefined);
    this.takesAskerAt = opts.takesAskerAt ?? isLoopback;
    const h = opts.health;
    this.health = h === undefined || h.maxFails === 0 ? null : new HealthChecks(h, (probe, end, server) => this.probe(probe, end, server));
  }

  /**
   * The default route. Throws ForwardError 'FORWARD_BAD_UPSTREAM' for a host that is not an IP.
   * Servers disabled with disable() are used again.
   */
  setUpstreams(servers: readonly Upstream[]): void {
    const normalized = servers.map(normalizeUpstream);
    this.install(normalized, this.stubConfig, this.exceptedConfig);
    this.defaultConfig = normalized;
    for (const server of this.servers.values()) server.disabled = false;
  }

  /**
   * Names at or under a domain go to its servers; the longest matching domain wins. Names whose
   * longest match is an `excepted` domain (a Corefile forward's `except`) are not forwarded: forward()
   * rejects them 'FORWARD_NO_SERVERS'.
   */
  setStubDomains(stubs: ReadonlyMap<string, readonly Upstream[]>, excepted: readonly string[] = []): void {
    const normalized = new Map<string, Upstream[]>();
    for (const [domain, servers] of stubs) normalized.set(domain, servers.map(normalizeUpstream));
    this.install(this.defaultConfig, normalized, excepted);
    this.stubConfig = normalized;
    this.exceptedConfig = excepted;
  }

  /**
   * Stops sending to `server` on the default route until the next setUpstreams(), as dnsmasq does
   * with a server its loop detection caught (only non-domain servers are probed, so stub domains
   * naming the same address keep using it). False when it is not an enabled default server.
   */
  disable(server: Upstream): boolean {
    const s = this.servers.get(serverKey(normalizeUpstream(server)));
    if (s === undefined || s.disabled || !this.routes.defaultRoute.includes(s)) return false;
    s.disabled = true;
    return true;
  }

  /**
   * Whether every server a name goes to may be passed the asker's address (takesAskerAt: by default a
   * server in the same pod, kube-dns beside dnscache; dnscache --add-subnet, node-cache).
   */
  takesAsker(qname: string): boolean {
    return this.askerRoutes.has(this.routes.serversFor(qname));
  }

  /** The servers a name would be sent to, in the order they are tried. */
  serversFor(qname: string): Upstream[] {
    const servers = this.routes.serversFor(qname);
    const skipDisabled = servers === this.routes.defaultRoute;
    const out: Upstream[] = [];
    for (const s of servers) if (!(skipDisabled && s.disabled)) out.push({ host: s.host, port: s.port });
    return out;
  }

  /**
   * Per-address counters, one entry per configured address (an address on several routes is one
   * entry): the default route's in order, then the stub domains' in the order they were given.
   */
  serverStats(): ServerStats[] {
    const out: ServerStats[] = [];
    for (const s of this.servers.values()) {
      out.push({ server: { host: s.host, port: s.port }, queries: s.queries, failed: s.failed, unanswered: s.unanswered, disabled: s.disabled });
    }
    return out;
  }

  /** Per configured address: tries, and replies by rcode with their durations (CoreDNS's forward metrics). */
  replyStats(): ReplyStats[] {
    return [...this.servers.values()].map((s) => ({ server: s, queries: s.queries, replies: s.replies, healthcheckFailures: s.healthcheckFailures }));
  }

  /** Queries currently waiting for an upstream. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Relays `query` (a client's complete DNS message) for `qname` and resolves with the upstream's
   * reply, carrying the client's ID. If every server answered SERVFAIL/REFUSED (or only a truncated
   * reply could be had) the last such reply is returned; with no reply at all it rejects
   * ForwardError 'FORWARD_ALL_FAILED'. `budgetMs` bounds the whole call (every try shares it);
   * spent without any reply, it rejects 'FORWARD_OUT_OF_TIME'.
   */
  async forward(query: Uint8Array, qname: string, budgetMs = Infinity): Promise<Uint8Array> {
    this.stats.queries++;
    if (this.closed) throw new ForwardError('FORWARD_CLOSED', 'the forwarder is closed');
    const queryEnd = questionEnd(query);
    if (queryEnd < 0) throw new ForwardError('FORWARD_BAD_QUERY', 'the query has no single readable question');
    const servers = this.routes.serversFor(qname);
    const skipDisabled = servers === this.routes.defaultRoute;
    if (servers.length === 0) throw new ForwardError('FORWARD_NO_SERVERS', this.routes.isExcepted(servers) ? `${qname} is excepted from forwarding` : `no upstream servers for ${qname}`);
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
      let tried = 0;
      const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
      const n = servers.length;
      const first = this.firstTry(n, this.routePolicies.get(servers) ?? this.policy);
      const skipDown = this.health !== null && !this.allDown(servers);
      for (let i = 0; i < n; i++) {
        const server = servers[(first + i) % n];
        if ((skipDisabled && server.disabled) || (skipDown && this.health!.down(server))) continue;
        const timeoutMs = this.tryTimeout(deadline);
        if (timeoutMs <= 0) break;
        tried++;
        server.queries++;
        const sent = performance.now();
        let reply = this.tcp !== null ? await this.tcp.exchange(out, queryEnd, server, timeoutMs) : await this.udp.exchange(out, queryEnd, server, timeoutMs);
        if (this.closed) throw new ForwardError('FORWARD_CLOSED', 'the forwarder was closed');
        if (reply === null) {
          server.unanswered++;
          this.health?.unanswered(server);
          continue;
        }
        this.health?.answered(server);
        if (isTruncated(reply)) {
          fallback = reply; // still tells the client to come back over TCP if nothing better turns up
          this.stats.tcpRetries++;
          const tcpTimeoutMs = this.tryTimeout(deadline);
          reply = tcpTimeoutMs > 0 ? await this.overTcp(out, queryEnd, server, tcpTimeoutMs) : null;
          if (this.closed) throw new ForwardError('FORWARD_CLOSED', 'the forwarder was closed');
          if (reply === null) {
            server.unanswered++;
            continue;
          }
        }
        const rcode = headerRcode(reply);
        server.replies.observe((performance.now() - sent) / 1000, rcode);
        if (rcode === Rcode.SERVFAIL || rcode === Rcode.REFUSED) {
          server.failed++;
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
      if (tried === 0) throw new ForwardError('FORWARD_NO_SERVERS', `every upstream server for ${qname} is disabled`);
      this.stats.failures++;
      if (this.tryTimeout(deadline) <= 0) throw new ForwardError('FORWARD_OUT_OF_TIME', `no upstream answered for ${qname} within ${budgetMs} ms`);
      throw new ForwardError('FORWARD_ALL_FAILED', `no upstream answered for ${qname}: tried ${servers.map(formatUpstream).join(', ')}`);
    } finally {
      this.inFlight--;
    }
  }

  /** Every server of a route down (counted: CoreDNS's healthcheck_broken; they are tried all the same). */
  private allDown(servers: readonly UpstreamServer[]): boolean {
    for (const s of servers) if (!this.health!.down(s)) return false;
    this.stats.healthcheckBroken++;
    return true;
  }

  /** Where a route of `n` servers starts, by its policy. */
  private firstTry(n: number, policy: ForwardPolicy): number {
    if (n <= 1 || policy === 'sequential') return 0;
    if (policy === 'random') return Math.floor(Math.random() * n);
    this.turn = (this.turn + 1) % n;
    return this.turn;
  }

  /** One health probe to `server` (UDP, at most a second): whether any reply came back. */
  private async probe(query: Buffer, queryEnd: number, server: UpstreamServer): Promise<boolean> {
    // The exchanger writes the ID.
    if (this.closed) return false;
    return (await this.udp.exchange(query, queryEnd, server, Math.min(this.timeoutMs, 1000))) !== null;
  }

  /** Fails waiting queries with FORWARD_CLOSED and closes every socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.health?.stop();
    for (const socket of this.tcpSockets) socket.destroy();
    this.tcp?.close();
    await this.udp.close();
  }

  /** Routes built over one set of server objects, taking over the current objects (and counts). */
  private install(defaults: readonly Upstream[], stubs: ReadonlyMap<string, readonly Upstream[]>, excepted: readonly string[]): void {
    const set = new ServerSet(this.servers);
    const defaultRoute = defaults.map((u) => set.intern(u));
    const stubRoutes = new Map<string, UpstreamServer[]>();
    this.routePolicies = new WeakMap();
    for (const [domain, servers] of stubs) {
      const route = servers.map((u) => set.intern(u));
      stubRoutes.set(domain, route);
      const policy = this.stubPolicy(domain.toLowerCase().replace(/\.$/, ''));
      if (policy !== undefined) this.routePolicies.set(route, policy);
    }
    this.routes.setDefault(defaultRoute);
    this.routes.setStubs(stubRoutes, excepted);
    this.servers = set.byKey;
    this.udp.keepOnly(this.servers.values());
    this.health?.keepOnly(this.servers.values());
    this.tcp?.keepOnly(this.servers.values());
    this.askerRoutes = new WeakSet();
    for (const route of [defaultRoute, ...stubRoutes.values()]) if (route.length > 0 && route.every((s) => this.takesAskerAt(s.host))) this.askerRoutes.add(route);
  }

  /**
   * A try's timeout: the configured one, or what is left before `deadline` if that is less; 0 when
   * under 2 ms are left (timers run on the loop's whole milliseconds, so one can fire a little before
   * the deadline by performance.now(): what is left then is not worth a try).
   */
  private tryTimeout(deadline: number): number {
    if (deadline === Infinity) return this.timeoutMs;
    const left = deadline - performance.now();
    return left < 2 ? 0 : Math.min(this.timeoutMs, left);
  }

  private async overTcp(query: Buffer, queryEnd: number, server: Upstream, timeoutMs: number): Promise<Buffer | null> {
    const id = readId(query);
    const reply = await tcpExchange(query, server, timeoutMs, this.tcpSockets);
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
