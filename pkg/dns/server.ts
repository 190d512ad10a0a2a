// DnsServer: UDP + TCP on one port, a handler for cache misses, and pre-encoded answers for
// everything the handler marks cacheable. The per-packet path (header checks, question walk,
// cache hit, patch, send) allocates only the key string and the reply buffer.

import { performance } from 'node:perf_hooks';
import { HEADER_SIZE, Rcode, UDP_MAX_SIZE, UDP_MIN_SIZE } from './constants.ts';
import { encodeMessage } from './encode.ts';
import { DnsParseError, parseErrorReason } from './errors.ts';
import { B2_QR, B3_CD, OFF_ANCOUNT, OFF_ARCOUNT, OFF_NSCOUNT, OFF_QDCOUNT, u16 } from './header.ts';
import type { Message, Question } from './message.ts';
import { canonicalName } from './names.ts';
import { parseMessage } from './parse.ts';
import { QUESTION_KEY_MAX, emptyOptView, readOpt, readQuestion, readStatusReason } from './question.ts';
import { clientSubnetOf, clientSubnetOpt } from './client-subnet.ts';
import type { ClientSubnet } from './client-subnet.ts';
import type { OptView } from './question.ts';
import type { Responder, Transport } from './responder.ts';
import { errorReply, render, renderState, sameQuestionName, sharedTemplate, suffixStart, templateFromEncoded, templateFromWire } from './template.ts';
import type { Template } from './template.ts';
import { AnswerCache } from './answer-cache.ts';
import { HitFrequency } from './prefetch.ts';
import { LIMITED } from './fairness.ts';
import type { Asker, Fairness } from './fairness.ts';
import { FlowSteering } from './udp-steer.ts';
import { assertUdpPortFree } from './port-taken.ts';
import type { PrefetchRule } from './prefetch.ts';
import { guardObserver } from './observer.ts';
import type { ServerObserver } from './observer.ts';
import { TcpListener } from './tcp.ts';
import type { TcpCloseReason, TcpConnection } from './tcp.ts';
import { UdpListener } from './udp.ts';

export type { Transport } from './responder.ts';
export type { ServerObserver } from './observer.ts';
export type { ClientSubnet } from './client-subnet.ts';

/** The Query of a parsed request (its one question) and its bytes: here, and for a miss from another thread (query-from-wire.ts). */
export function queryOf(message: Message, wire: Uint8Array, transport: Transport, remoteAddress: string, remotePort: number, clientSubnet: ClientSubnet | null, prefetch = false): Query {
  const question = message.questions[0];
  return { message, question, qname: canonicalName(question.name), wire, transport, remoteAddress, remotePort, clientSubnet, prefetch };
}

/** Handed to the handler on a cache miss. */
export interface Query {
  /** The parsed request. */
  message: Message;
  /** message.questions[0], name exactly as asked. */
  question: Question;
  /** canonicalName(question.name). */
  qname: string;
  /**
   * The request's own bytes, header through its last record (trailing bytes left off): what a
   * forwarder relays instead of encoding `message` again. A view of the received packet; not to be
   * written to.
   */
  wire: Uint8Array;
  transport: Transport;
  remoteAddress: string;
  remotePort: number;
  /** The request's EDNS Client Subnet (RFC 7871), e.g. the pod a forwarder asks for; null without one. */
  clientSubnet: ClientSubnet | null;
  /**
   * The answer cache's entry for this question is about to expire (Answer.prefetch): ask the source,
   * not a copy the handler keeps. The answer is stored, not sent; the asker was answered from the cache.
   */
  prefetch: boolean;
  /** A handler that drops the query (answers null) may say why here: the dropped counts' reason. Unset: 'handler'. */
  dropReason?: string;
  /**
   * A handler that drops the query because the TCP connection's own asker is over its share elsewhere
   * (--workers' owner keeps the shares) says for how long here: the connection takes no frames that
   * long, as one this server's own fair shares hold until the window ends.
   */
  holdMs?: number;
}

export interface Answer {
  /**
   * The response. The server sets id, qr, opcode, rd, cd, the question (echoed from the
   * request) and the OPT record, and truncates; aa, ra, rcode and the sections are the handler's.
   */
  message?: Message;
  /** Or a complete response already encoded (e.g. relayed); its ID and question case are patched. */
  wire?: Uint8Array;
  /** Keep the encoded bytes for this question (until invalidate(), or `ttl`). Default false. */
  cacheable?: boolean;
  /**
   * For a cacheable answer: seconds it may be served from the cache. Every record TTL in a reply
   * from the cache is reduced by the whole seconds the entry has been kept, so the TTLs in the
   * answer should not exceed this. Under 1: not kept. Without it the entry lives until
   * invalidate() or the LRU pushes it out.
   */
  ttl?: number;
  /**
   * The answer is the same for every name below this one, with the same rcode: a negative answer
   * whose only records are its zone's (the SOA), never the question name's. The server then keeps
   * one template for all of those names instead of an entry per name (a flood of random names costs
   * no memory), encoded once for this name and patched per asker. Only for a `message` answer with
   * no answer or additional records; `cacheable` is then moot. A question not below it is answered
   * as if it were not set.
   */
  below?: string;
  /**
   * Cached entries of one group are dropped together by invalidate(groups) (kube-dns: the service
   * the answer came from), the rest of the cache kept. Without one, only invalidate() drops it.
   */
  group?: string;
  /** An opaque number (>= 0) handed to the observer with every reply of this answer, from the cache too; NO_TAG (-1) marks an error reply made without one. */
  tag?: number;
  /**
   * The answer holds only for this asker: the first `clientScope` bits of the request's Client
   * Subnet (RFC 7871's SCOPE PREFIX-LENGTH), or its address without one. The server never caches it,
   * and a reply to a request with a Client Subnet carries the option back with the scope, so a
   * caching forwarder keeps it for that subnet only. Answers without it carry no option: valid for
   * every asker.
   */
  clientScope?: number;
  /** A cacheable answer with a `ttl`: asked again of the handler (Query.prefetch) ahead of its expiry as this rule says. */
  prefetch?: PrefetchRule;
  /**
   * A cacheable answer that holds for every asker of the query's cache partition (partitionCache()),
   * not for all: kept only under that partition, never by a server without one.
   */
  partitioned?: boolean;
}

/**
 * Which part of the answer cache a query's asker reads and fills (DnsServer.partitionCache): a number
 * 0-65535, or -1 for none (the question's own entries only; a partitioned answer is not kept).
 */
export type CachePartition = (address: string, view: OptView) => number;

/**
 * A reply just sent: the request, where its question name ends (under HEADER_SIZE: no question was
 * read), the reply's bytes from `replyStart` (after a TCP length prefix), its full rcode, the asker, and
 * the seconds since the request came. Nine arguments rather than an object: it runs once per reply.
 */
export type ReplyHook = (req: Buffer, nameEnd: number, reply: Buffer, replyStart: number, rcode: number, address: string, port: number, transport: Transport, seconds: number) => void;

/** null = drop the query silently. */
export type Handler = (q: Query) => Answer | null | Promise<Answer | null>;

export interface DnsServerOptions {
  handler: Handler;
  /** '127.0.0.1', '0.0.0.0', '::' ... */
  address: string;
  /** 0 = one free port, the same number for UDP and TCP. */
  port: number;
  observer?: ServerObserver;
  /** Bytes the pre-encoded answers may take (LRU; AnswerCache's entryBytes). Default 16 MiB; 0 disables the cache. */
  answerCacheBytes?: number;
  /** A cache to use instead of one of its own (e.g. one shared by several servers); answerCacheBytes is then ignored. */
  answerCache?: AnswerCache;
  /**
   * Called before a reply from the cache goes out (the handler never sees those queries), with the
   * query and where its question name ends. For logging; what it throws is reported as handlerError.
   */
  onCacheHit?: (req: Buffer, nameEnd: number, remoteAddress: string) => void;
  /** Called after every reply is sent, from the cache or not (a query log: CoreDNS's `log`); what it throws is reported as handlerError. */
  onReply?: ReplyHook;
  tcpIdleTimeoutMs?: number;
  /** A TCP frame begun must be whole within this, from its first byte. Default 2 s. */
  tcpFrameTimeoutMs?: number;
  /** At the cap a newcomer closes the connection with the oldest progress that owes nothing. Default 1,000. */
  maxTcpConnections?: number;
  maxTcpPipelined?: number;
  /** SO_RCVBUF to ask for (bounded by net.core.rmem_max); failure is ignored. Default 4 MiB. */
  udpRecvBufferSize?: number;
  /**
   * Bind UDP and TCP with SO_REUSEPORT: another socket (a successor process, another thread of this
   * one) can bind the same port and serve beside this one (node-cache's surge, --workers). Default false.
   */
  reusePort?: boolean;
  /**
   * With reusePort: this server joins a port that one of ours already serves (another thread beside
   * its owner, node-cache's successor). Without it a port another socket holds is refused
   * (EADDRINUSE), as a plain bind would be: SO_REUSEPORT would share it silently. Default false.
   */
  joinsPort?: boolean;
  /**
   * Round robin (CoreDNS's loadbalance): a reply whose answers are two or more A (or AAAA) records of
   * one name, from the handler or the cache, starts one record further on than the last. Default false.
   */
  roundRobin?: boolean;
  /**
   * Misses shared fairly between askers while the thread is busy (fairness.ts): over its share, an
   * asker's miss is dropped before it is parsed (`dropped('limited')`). Default none: every miss answered.
   */
  fairness?: Fairness;
  /**
   * The largest UDP reply, whatever the asker's EDNS buffer says (CoreDNS's bufsize: 1232 keeps
   * replies unfragmented). Default UDP_MAX_SIZE (4096); at least 512.
   */
  maxUdpSize?: number;
}

export interface ServerStats {
  queries: number;
  cacheHits: number;
  cacheMisses: number;
  malformed: number;
  dropped: number;
  truncated: number;
  /** Open now. */
  tcpConnections: number;
  /** Closed by the server: idle, a frame unfinished in time (stalled), room made at the cap (evicted). */
  tcpClosed: Record<TcpCloseReason, number>;
  /** Cached answers asked again of the handler ahead of their expiry (Answer.prefetch). */
  prefetches: number;
}

const TCP_MAX_SIZE = 65535;
/** The last byte of a cache key. */
const KEY_DO = 1;
const KEY_CD = 2;
/** The answer cache's default budget. */
export const DEFAULT_ANSWER_CACHE_BYTES = 16 * 1024 * 1024;
/**
 * Shared templates (Answer.below) live in the answer cache under keys no question can have: a
 * question key starts with a label length (at most 63) or the root's 0.
 */
const SHARED_KEY = '\xff';
/** Tries to find a port free for both UDP and TCP when asked for port 0. */
const PORT_ATTEMPTS = 20;
/**
 * How long close() waits for queries in flight. Shorter than the 5 s our supervisors (the nanny, the
 * local pod) allow after SIGTERM: a forward to an upstream that is gone (kube-dns stopping beside
 * dnscache) must not turn a clean stop into a SIGKILL.
 */
const DEFAULT_DRAIN_MS = 3000;
/** DnsServerOptions.maxTcpConnections's default. */
export const DEFAULT_MAX_TCP_CONNECTIONS = 1_000;
/** The tag an error reply made without the handler's answer reports (the handler's tags are >= 0). */
export const NO_TAG = -1;
/** close() ends its drain once nothing is in flight and no query came for this long. */
const QUIET_MS = 20;

export class DnsServer {
  readonly stats: ServerStats = {
    queries: 0,
    cacheHits: 0,
    cacheMisses: 0,
    malformed: 0,
    dropped: 0,
    truncated: 0,
    tcpConnections: 0,
    tcpClosed: { idle: 0, stalled: 0, evicted: 0 },
    prefetches: 0,
  };
  private readonly handler: Handler;
  private readonly observer: ServerObserver;
  private readonly cache: AnswerCache;
  private readonly onCacheHit: DnsServerOptions['onCacheHit'];
  private readonly onReply: ReplyHook | undefined;
  /** Whether a reply's time is measured: someone reads it. */
  private readonly timed: boolean;
  private readonly opts: Required<Omit<DnsServerOptions, 'observer' | 'handler' | 'answerCache' | 'onCacheHit' | 'onReply' | 'fairness'>>;
  private readonly fairness: Fairness | null;
  /** The UDP port's flow steering, with fair shares (udp-steer.ts). */
  private steering: FlowSteering | null = null;
  private udp: UdpListener | null = null;
  private tcp: TcpListener | null = null;
  private closing = false;
  /** Queries waiting on an asynchronous handler. */
  private inflight = 0;
  // Reused by every packet; only read synchronously. One byte past the question for DO and CD.
  /** The question's key, its DO/CD byte, and a partition's two bytes. */
  private readonly keyBuf = Buffer.allocUnsafe(QUESTION_KEY_MAX + 3);
  private partition: CachePartition | null = null;
  private readonly optView: OptView = emptyOptView();

  constructor(options: DnsServerOptions) {
    this.handler = options.handler;
    this.observer = guardObserver(options.observer);
    this.opts = {
      address: options.address,
      port: options.port,
      answerCacheBytes: options.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES,
      tcpIdleTimeoutMs: options.tcpIdleTimeoutMs ?? 10_000,
      tcpFrameTimeoutMs: options.tcpFrameTimeoutMs ?? 2_000,
      maxTcpConnections: options.maxTcpConnections ?? DEFAULT_MAX_TCP_CONNECTIONS,
      maxTcpPipelined: options.maxTcpPipelined ?? 100,
      udpRecvBufferSize: options.udpRecvBufferSize ?? 4 * 1024 * 1024,
      // With fair shares, a flooding flow may be steered to a queue of its own on the same port (udp-steer.ts).
      reusePort: options.reusePort ?? options.fairness !== undefined,
      joinsPort: options.joinsPort ?? false,
      roundRobin: options.roundRobin ?? false,
      maxUdpSize: Math.max(UDP_MIN_SIZE, options.maxUdpSize ?? UDP_MAX_SIZE),
    };
    this.cache = options.answerCache ?? new AnswerCache({ maxBytes: this.opts.answerCacheBytes });
    this.onCacheHit = options.onCacheHit;
    this.fairness = options.fairness ?? null;
    this.onReply = options.onReply;
    this.timed = this.observer.response !== undefined || this.onReply !== undefined;
  }

  async listen(): Promise<{ address: string; port: number }> {
    const { address, port } = this.opts;
    if (this.opts.reusePort && !this.opts.joinsPort) await assertUdpPortFree(address, port);
    for (let attempt = 1; ; attempt++) {
      const udp = this.makeUdp();
      const tcp = this.makeTcp();
      const udpPort = await udp.bind(address, port);
      try {
        const tcpPort = await tcp.listen(address, udpPort);
        this.udp = udp;
        this.tcp = tcp;
        if (this.fairness !== null) {
          this.steering = new FlowSteering({ open: (a, p) => udp.steer(a, p) });
          // The buffer granted, not the one asked for: capped by rmem_max, the queue may never reach a quarter of the latter.
          this.fairness.watch(udpPort, udp.recvBufferBytes(), this.steering);
        }
        return { address, port: tcpPort };
      } catch (err) {
        await udp.close();
        // Port 0 picked a UDP port whose TCP twin is taken: pick again.
        if (port !== 0 || attempt >= PORT_ATTEMPTS || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
  }

  /**
   * A UDP miss from `address`:`port` (its own asker, not a cache's Client Subnet) dropped over its
   * share: with a flood backing up the port, a candidate for a queue of its own (udp-steer.ts). Told
   * here by this server, and by --workers' owner for the misses another thread read on this port.
   */
  flowDropped(address: string, port: number): void {
    this.steering?.dropped(address, port);
  }

  /** The same for an admitted miss: a flow making most of a busy window's misses is a candidate too. */
  flowMissed(address: string, port: number): void {
    this.steering?.missed(address, port);
  }

  /**
   * Splits the answer cache by asker from now on (null: one cache for all again): each query's key
   * gets `fn`'s partition, so an answer marked `partitioned` is kept for the askers of its partition
   * (kube-dns under a visibility policy: the asker's namespace). Drops nothing: call invalidate().
   */
  partitionCache(fn: CachePartition | null): void {
    this.partition = fn;
  }

  /**
   * Forgets pre-encoded answers (the records changed): those stored in one of `groups`, or without
   * it every one. With a shared cache, for every server using it.
   */
  invalidate(groups?: Iterable<string>): void {
    if (groups === undefined) this.cache.clear();
    else this.cache.forget(groups);
  }

  /**
   * Stops taking TCP connections, answers until nothing is in flight and no query has come for
   * QUIET_MS (at most drainMs), then closes the sockets. UDP queries that arrive meanwhile are
   * answered: the clients of a server being replaced (a successor on the same port, a pod going
   * away) are not dropped while it drains.
   */
  async close(drainMs = DEFAULT_DRAIN_MS): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Steered flows' sockets are this port's too: they go with it.
    this.steering?.releaseAll();
    const stopTcp = this.tcp?.stopAccepting();
    await this.drain(drainMs);
    this.tcp?.destroyAll();
    await Promise.all([stopTcp, this.udp?.close()]);
  }

  // Waiting for quiet as well as for the queries in flight: datagrams still queued when the socket
  // closes are lost, and with a successor on the port (SO_REUSEPORT) the kernel keeps a client's
  // flow on this socket until it closes, so a busy client is served here until the drain ends. Each
  // wait ends with a poll phase (setImmediate runs after it): what arrived while the process was not
  // running is read then, and the sockets close microseconds after the kernel's queue was found empty.
  private async drain(drainMs: number): Promise<void> {
    const until = performance.now() + drainMs;
    for (;;) {
      const seen = this.stats.queries;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(QUIET_MS, until - performance.now()))));
      await new Promise((resolve) => setImmediate(resolve));
      if ((this.stats.queries === seen && this.inflight === 0) || performance.now() >= until) return;
    }
  }

  private makeUdp(): UdpListener {
    return new UdpListener(this.opts.address, {
      onQuery: (msg, address, port, via) => this.safeQuery(msg, address, port, via),
      onError: (err) => this.observer.socketError?.('udp', err),
      recvBufferSize: this.opts.udpRecvBufferSize,
      reusePort: this.opts.reusePort,
    });
  }

  private makeTcp(): TcpListener {
    return new TcpListener({
      onQuery: (msg, address, port, via) => this.safeQuery(msg, address, port, via),
      onBadFrame: () => this.malformed('tcp-frame-length'),
      onDropped: (reason) => this.drop(reason),
      onOpenChange: (open) => {
        this.stats.tcpConnections = open;
      },
      onClosed: (reason) => {
        this.stats.tcpClosed[reason]++;
        this.observer.tcpClosed?.(reason);
      },
      idleTimeoutMs: this.opts.tcpIdleTimeoutMs,
      frameTimeoutMs: this.opts.tcpFrameTimeoutMs,
      maxConnections: this.opts.maxTcpConnections,
      maxPipelined: this.opts.maxTcpPipelined,
      reusePort: this.opts.reusePort,
    });
  }

  // Nothing a client sends may throw out of a socket callback.
  private safeQuery(req: Buffer, address: string, port: number, via: Responder): void {
    try {
      this.query(req, address, port, via);
    } catch (err) {
      this.observer.handlerError?.(err);
      via.skip();
    }
  }

  private cacheHitSeen(req: Buffer, nameEnd: number, address: string): void {
    try {
      this.onCacheHit!(req, nameEnd, address);
    } catch (err) {
      // A logging bug must not cost a client its answer.
      this.observer.handlerError?.(err);
    }
  }

  private malformed(reason: string): void {
    this.stats.malformed++;
    this.observer.malformed?.(reason);
  }

  private drop(reason: string): void {
    this.stats.dropped++;
    this.observer.dropped?.(reason);
  }

  /** The query path: checks, then the cache, then the handler. Calls via.send or via.skip once. */
  private query(req: Buffer, address: string, port: number, via: Responder): void {
    this.stats.queries++;
    const started = this.timed ? performance.now() : 0;
    if (req.length < HEADER_SIZE) {
      this.malformed('short');
      return via.skip();
    }
    if (req[2] & B2_QR) {
      this.drop('response-packet');
      return via.skip();
    }
    const qd = u16(req, OFF_QDCOUNT);
    const opcode = (req[2] >>> 3) & 0xf;
    if (opcode !== 0) {
      const qEnd = qd === 1 ? readQuestion(req, HEADER_SIZE) : -1;
      return this.fail(req, Rcode.NOTIMP, qEnd, null, address, port, via, started);
    }
    const ar = u16(req, OFF_ARCOUNT);
    if (qd !== 1 || u16(req, OFF_ANCOUNT) !== 0 || u16(req, OFF_NSCOUNT) !== 0 || ar > 1) {
      this.malformed(qd !== 1 ? 'qdcount' : 'counts');
      return this.fail(req, Rcode.FORMERR, -1, null, address, port, via, started);
    }
    const key = this.keyBuf;
    const qEnd = readQuestion(req, HEADER_SIZE, key);
    if (qEnd < 0) {
      this.malformed(readStatusReason(qEnd));
      return this.fail(req, Rcode.FORMERR, -1, null, address, port, via, started);
    }
    const nameEnd = qEnd - 4;
    let msgEnd = qEnd;
    let optDo: boolean | null = null;
    let limit = via.transport === 'tcp' ? TCP_MAX_SIZE : UDP_MIN_SIZE;
    this.optView.ecsFamily = 0;
    if (ar === 1) {
      const opt = this.optView;
      const end = readOpt(req, qEnd, opt);
      if (end < 0) {
        this.malformed(readStatusReason(end));
        return this.fail(req, Rcode.FORMERR, qEnd, null, address, port, via, started);
      }
      if (opt.version > 0) return this.fail(req, Rcode.BADVERS, qEnd, opt.do, address, port, via, started);
      msgEnd = end;
      optDo = opt.do;
      if (via.transport === 'udp') limit = Math.max(UDP_MIN_SIZE, Math.min(opt.udpSize, this.opts.maxUdpSize));
    }
    // Answers may differ with DO and CD (a DNSSEC-aware upstream's do), so every key carries both.
    const keyEnd = qEnd - HEADER_SIZE;
    key[keyEnd] = (optDo === true ? KEY_DO : 0) | (req[3] & B3_CD ? KEY_CD : 0);
    let keyLength = keyEnd + 1;
    const partition = this.partition === null ? -1 : this.partition(address, this.optView);
    if (partition >= 0) {
      key[keyLength++] = partition >>> 8;
      key[keyLength++] = partition & 0xff;
    }
    const cacheKey = key.toString('latin1', 0, keyLength);
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) {
      this.stats.cacheHits++;
      if (this.onCacheHit !== undefined) this.cacheHitSeen(req, nameEnd, address);
      // Read before reply(): the asker's bytes may be reused once it is sent.
      const again = this.cache.prefetchDue ? Buffer.from(req.subarray(0, msgEnd)) : null;
      this.reply(hit, req, nameEnd, optDo, limit, address, port, via, started, true, this.cache.age);
      if (again !== null) this.prefetch(again, qEnd, cacheKey, optDo, hit, address, port, via.transport);
      return;
    }
    this.stats.cacheMisses++;
    let asker: Asker | null = null;
    if (this.fairness !== null) {
      // Before any parsing beyond the question: a miss over its asker's share costs next to nothing.
      const who = this.fairness.askerOf(req, address, this.optView);
      asker = this.fairness.admit(who);
      if (asker === null) {
        // Its own flow (not a cache's, named in the Client Subnet): over UDP a candidate for a queue
        // of its own; over TCP its connection is not read again this window.
        if (who === address) {
          if (via.transport === 'udp') this.flowDropped(address, port);
          else this.steering?.hold(via as TcpConnection);
        }
        // REFUSED is an answer (counted under its rcode), not also a drop.
        if (this.fairness.refuses(via.transport, who, address)) return this.fail(req, Rcode.REFUSED, qEnd, optDo, address, port, via, started);
        this.drop(LIMITED);
        return via.skip();
      }
      if (who === address && via.transport === 'udp') this.flowMissed(address, port);
    }
    this.miss(req, qEnd, msgEnd, cacheKey, partition >= 0, optDo, limit, address, port, via, started, asker);
  }

  private miss(
    req: Buffer,
    qEnd: number,
    msgEnd: number,
    cacheKey: string,
    partitioned: boolean,
    optDo: boolean | null,
    limit: number,
    address: string,
    port: number,
    via: Responder,
    started: number,
    asker: Asker | null,
  ): void {
    let message: Message;
    try {
      message = parseMessage(req);
    } catch (err) {
      this.malformed(err instanceof DnsParseError ? parseErrorReason(err.code) : 'parse');
      return this.fail(req, Rcode.FORMERR, qEnd, null, address, port, via, started);
    }
    const q = queryOf(message, msgEnd === req.length ? req : req.subarray(0, msgEnd), via.transport, address, port, clientSubnetOf(req, this.optView));
    const question = q.question;
    const generation = this.cache.generation;
    const finish = (answer: Answer | null): void => {
      if (answer === null) {
        this.drop(q.dropReason ?? 'handler');
        // Before skip(), which would take the next frame.
        if (q.holdMs !== undefined && via.transport === 'tcp') (via as TcpConnection).holdFor(q.holdMs);
        return via.skip();
      }
      let t: Template | null = null;
      try {
        if (answer.below !== undefined) t = this.shared(answer, question, req, qEnd - 4, generation);
        if (t === null) {
          t = this.template(answer, question, req, qEnd, optDo !== null);
          t.tag = answer.tag ?? 0;
          if (answer.clientScope !== undefined) {
            if (q.clientSubnet !== null) t.opt = clientSubnetOpt(q.clientSubnet, answer.clientScope, t.rcode);
          } else if (answer.cacheable === true && (answer.partitioned !== true || partitioned)) {
            if (answer.prefetch !== undefined && answer.ttl !== undefined) t.freq = new HitFrequency(answer.prefetch);
            this.cache.set(cacheKey, t, generation, answer.ttl, answer.group);
          }
        }
      } catch (err) {
        return this.handlerFailed(err, req, qEnd, optDo, address, port, via, started);
      }
      this.reply(t, req, qEnd - 4, optDo, limit, address, port, via, started, false, 0);
    };
    let result: Answer | null | Promise<Answer | null>;
    try {
      result = this.handler(q);
    } catch (err) {
      return this.handlerFailed(err, req, qEnd, optDo, address, port, via, started);
    }
    if (!isPromise(result)) return finish(result);
    this.inflight++;
    const since = asker !== null ? this.fairness!.started(asker) : 0;
    result
      .then(finish, (err: unknown) => this.handlerFailed(err, req, qEnd, optDo, address, port, via, started))
      .catch((err: unknown) => {
        // finish() itself failed (an observer threw): still owe the transport an answer.
        this.observer.handlerError?.(err);
        via.skip();
      })
      .finally(() => {
        this.inflight--;
        if (asker !== null) this.fairness!.finished(asker, since);
      });
  }

  /**
   * Asks the handler again for a cached answer about to expire (`old`, whose HitFrequency said so) and
   * stores what it answers in its place; nothing is sent. A failure or an answer not to be kept
   * leaves `old` to expire; a later ask may try again.
   */
  private prefetch(req: Buffer, qEnd: number, cacheKey: string, optDo: boolean | null, old: Template, address: string, port: number, transport: Transport): void {
    this.stats.prefetches++;
    this.observer.prefetch?.(old.tag);
    const generation = this.cache.generation;
    const failed = (err: unknown) => {
      old.freq!.refreshing = false;
      this.observer.handlerError?.(err);
    };
    try {
      const q = queryOf(parseMessage(req), req, transport, address, port, clientSubnetOf(req, this.optView), true);
      const store = (answer: Answer | null): void => {
        if (answer === null || answer.cacheable !== true || answer.ttl === undefined || answer.prefetch === undefined) {
          old.freq!.refreshing = false;
          return;
        }
        const t = this.template(answer, q.question, req, qEnd, optDo !== null);
        t.tag = answer.tag ?? 0;
        t.freq = old.freq!.carriedTo(answer.prefetch);
        this.cache.set(cacheKey, t, generation, answer.ttl, answer.group);
      };
      const result = this.handler(q);
      if (isPromise(result)) result.then(store).catch(failed);
      else store(result);
    } catch (err) {
      failed(err);
    }
  }

  // Turns the handler's answer into a template for this question.
  private template(answer: Answer, question: Question, req: Buffer, qEnd: number, reqHasOpt: boolean): Template {
    if (answer.wire !== undefined) {
      const t = templateFromWire(answer.wire);
      if (!sameQuestionName(t, req, qEnd - 4)) t.nameEnd = 0;
      return t;
    }
    const m = answer.message;
    if (m === undefined) throw new Error('handler answer has neither message nor wire');
    let rcode = m.rcode;
    // Extended rcodes live in the OPT; without one from the asker there is no way to say them.
    if (rcode > 15 && !reqHasOpt) rcode = Rcode.SERVFAIL;
    const enc = encodeMessage(
      {
        ...m,
        id: 0,
        qr: true,
        opcode: 0,
        rd: false,
        cd: false,
        rcode: rcode & 0xf,
        // Stored lowercased: each reply gets the asker's case copied over it.
        questions: [{ name: canonicalName(question.name), type: question.type, class: question.class }],
        edns: null,
      },
      TCP_MAX_SIZE,
    );
    return templateFromEncoded(enc, qEnd, rcode);
  }

  /**
   * The template every name below `answer.below` shares (made on first use); null when the asked name
   * is not below it or the answer cannot be shared (then it is answered as an ordinary one).
   */
  private shared(answer: Answer, question: Question, req: Buffer, nameEnd: number, generation: number): Template | null {
    const m = answer.message;
    if (m === undefined || m.rcode > 15) return null;
    const below = canonicalName(answer.below!);
    // The suffix's wire length: plain labels (a zone name) take their text plus a length byte each.
    if (suffixStart(req, nameEnd, below === '' ? 1 : below.length + 2) < 0) return null;
    const key = `${SHARED_KEY}${m.rcode}|${below}`;
    const known = this.cache.peek(key);
    if (known !== undefined) return known;
    const enc = encodeMessage({ ...m, id: 0, qr: true, opcode: 0, rd: false, cd: false, questions: [{ name: below, type: question.type, class: question.class }], edns: null }, TCP_MAX_SIZE);
    const t = sharedTemplate(enc, HEADER_SIZE + (below === '' ? 1 : below.length + 2) + 4, m.rcode);
    if (t === null) return null;
    t.tag = answer.tag ?? 0;
    this.cache.set(key, t, generation, undefined, answer.group);
    return t;
  }

  private handlerFailed(
    err: unknown,
    req: Buffer,
    qEnd: number,
    optDo: boolean | null,
    address: string,
    port: number,
    via: Responder,
    started: number,
  ): void {
    this.observer.handlerError?.(err);
    this.fail(req, Rcode.SERVFAIL, qEnd, optDo, address, port, via, started);
  }

  private reply(
    t: Template,
    req: Buffer,
    nameEnd: number,
    optDo: boolean | null,
    limit: number,
    address: string,
    port: number,
    via: Responder,
    started: number,
    fromCache: boolean,
    age: number,
  ): void {
    const out = render(t, req, nameEnd, optDo, limit, via.headroom, age, this.opts.roundRobin);
    if (renderState.truncated) {
      this.stats.truncated++;
      this.observer.truncated?.();
    }
    const truncated = renderState.truncated;
    via.send(out, port, address);
    this.observed(req, nameEnd, t.rcode, via, started, fromCache, t.tag, out, truncated, address, port);
  }

  /** An error reply straight from the request bytes; qEnd < 0 means no question to echo. */
  private fail(
    req: Buffer,
    rcode: number,
    qEnd: number,
    optDo: boolean | null,
    address: string,
    port: number,
    via: Responder,
    started: number,
  ): void {
    const out = errorReply(req, rcode, qEnd, optDo, via.headroom);
    via.send(out, port, address);
    this.observed(req, qEnd - 4, rcode, via, started, false, NO_TAG, out, false, address, port);
  }

  // Arguments rather than an object: this runs once per reply, and must not allocate.
  private observed(req: Buffer, nameEnd: number, rcode: number, via: Responder, started: number, fromCache: boolean, tag: number, out: Buffer, truncated: boolean, address: string, port: number): void {
    if (!this.timed) return;
    const seconds = (performance.now() - started) / 1000;
    if (this.observer.response !== undefined) {
      const qtype = nameEnd > HEADER_SIZE ? u16(req, nameEnd) : 0;
      this.observer.response(qtype, rcode, via.transport, seconds, fromCache, tag, out.length - via.headroom, truncated, req.length);
    }
    if (this.onReply !== undefined) this.replySeen(req, nameEnd, out, via, rcode, address, port, seconds);
  }

  private replySeen(req: Buffer, nameEnd: number, out: Buffer, via: Responder, rcode: number, address: string, port: number, seconds: number): void {
    try {
      this.onReply!(req, nameEnd, out, via.headroom, rcode, address, port, via.transport, seconds);
    } catch (err) {
      // A logging bug must not cost a client its answer (it is sent already).
      this.observer.handlerError?.(err);
    }
  }
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as Promise<T> | null)?.then === 'function';
}
