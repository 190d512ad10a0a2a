// The DnsServer handler, for what the DnsServers' shared answer cache could not answer: CHAOS
// statistics, then our own loop probes coming back (dropped), then one upstream query per distinct
// question in flight (later askers of the same question wait for it). The reply comes back with
// the lifetime the cache policy gives it, and the DnsServer keeps it for that long.

import { LRUCache } from 'lru-cache';
import { takeClientSubnet, withClientSubnet } from '../dns/client-subnet.ts';
import { Class, Rcode } from '../dns/constants.ts';
import { canonicalName, readName } from '../dns/codec.ts';
import { u16 } from '../dns/header.ts';
import { emptyMessage } from '../dns/message.ts';
import { readTtl, writeTtl } from '../dns/walk.ts';
import { ENTRY_OVERHEAD } from '../dns/answer-cache.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import { ForwardError } from '../forward/forward.ts';
import type { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { prepareForCache, prepareForKeeping, questionKey } from './cache.ts';
import type { CachePolicy } from './cache.ts';
import type { LoopDetector } from './loop.ts';
import { ReplyRing } from './reply-ring.ts';
import { StaleReplies } from './stale.ts';
import type { EarlyReply } from './stale.ts';
import { chaosReply } from './stats.ts';
import type { CacheCounters } from './stats.ts';

export interface HandlerStats {
  /** Upstream queries sent (one per distinct question in flight). */
  forwarded: number;
  /** Askers that waited on another asker's upstream query instead of sending their own. */
  shared: number;
  /** Answered SERVFAIL/REFUSED/FORMERR because forwarding failed. */
  failures: number;
  /** Answered from an expired reply because forwarding failed (serve-stale). */
  stale: number;
}

export interface CachingHandlerOptions {
  /** The DnsServers' shared cache (for the CHAOS counters; the servers store and serve the entries). */
  cache: AnswerCache;
  policy: CachePolicy;
  forwarder: Forwarder;
  log: Logger;
  /** --log-queries: one info line per query (name, type, where the answer came from). */
  logQueries?: boolean;
  /** --dns-loop-detect: returning probes are dropped before the cache (no miss, nothing cached). */
  loop?: LoopDetector;
  /** servers.bind's strings; without it servers.bind is refused like any unknown CHAOS name. */
  serversBind?: () => string[];
  /** --add-subnet: the asker's address goes to the servers its forwarder takes it at (takesAsker), and replies scoped to it are kept for it alone. */
  addSubnet?: boolean;
  /** Every answer's Answer.tag is this plus its AnswerKind (node-cache: the zone's first tag). Default 0. */
  tagBase?: number;
  /**
   * The CHAOS statistics (counters, servers.bind's strings) of the whole process when it answers from
   * several threads (dnscache --workers): CHAOS queries are answered once they are in. Without it,
   * this handler's own.
   */
  statistics?: () => Promise<{ counters: CacheCounters; servers: string[] }>;
  /**
   * Keep every cacheable reply here too, within maxBytes (dnscache --workers: the handler of every
   * thread's misses), so a question one thread's cache missed and another's asked before is answered
   * from here, its TTLs aged, and cached by the asking thread: one upstream query per question for
   * all threads. It is then the process's one logical cache: the CHAOS insertions and evictions are
   * its own, and the hits are the threads' plus its own.
   */
  sharedStore?: { maxBytes: number };
}

/** The shared store's counts (CachingHandlerOptions.sharedStore), for the statistics. */
export interface SharedStoreStats {
  entries: number;
  bytes: number;
  insertions: number;
  evictions: number;
  expired: number;
}

/**
 * What an answer is, in its Answer.tag (tagBase + kind): the DNS server reports it with each reply,
 * from the cache too, so per-zone metrics tell hits by CoreDNS's cache types (success, denial).
 */
/** keptSuccess, keptDenial: answered from the replies kept for one asker (--add-subnet): hits too, in CoreDNS's terms. */
export const AnswerKind = { success: 0, denial: 1, stale: 2, failed: 3, keptSuccess: 4, keptDenial: 5 } as const;
export const ANSWER_KINDS = 6;

/** NXDOMAIN, or NOERROR with no answer (NODATA): what CoreDNS's cache calls a denial. */
function isDenial(wire: Uint8Array): boolean {
  const rcode = wire[3] & 0x0f;
  return rcode === Rcode.NXDOMAIN || (rcode === Rcode.NOERROR && wire[6] === 0 && wire[7] === 0);
}

/** A reply in the shared store (--workers): its bytes (read only), where its TTLs are, when it was kept (ms) and for how long (s). */
interface KeptReply {
  wire: Uint8Array;
  ttlOffsets: readonly number[];
  storedAt: number;
  ttl: number;
}

/** An upstream reply with TTLs as the cache keeps them, and its lifetime (0 = not kept). */
interface Forwarded {
  wire: Uint8Array;
  ttl: number;
  /** The server scoped it to the asker (a Client Subnet scope above 0): never in the shared cache. */
  scoped?: boolean;
}

export class CachingHandler {
  readonly stats: HandlerStats = { forwarded: 0, shared: 0, failures: 0, stale: 0 };
  private readonly cache: AnswerCache;
  private readonly policy: CachePolicy;
  private readonly forwarder: Forwarder;
  private readonly log: Logger;
  private readonly logQueries: boolean;
  private readonly loop: LoopDetector | undefined;
  private readonly serversBind: (() => string[]) | undefined;
  private readonly tagBase: number;
  private readonly statistics: CachingHandlerOptions['statistics'];
  private readonly inflight = new Map<string, Promise<Forwarded>>();
  private readonly addSubnet: boolean;
  /** --add-subnet: replies scoped to one asker, by `<asker> <question key>`; null without it or a cache. */
  private readonly scoped: ReplyRing | null;
  /** sharedStore: every cacheable reply, by question key, until its TTL; null = off. */
  private readonly shared: LRUCache<string, KeptReply> | null;
  /** Questions answered from `shared`: hits of the process's one logical cache. */
  private sharedHits = 0;
  private readonly sharedCounts = { insertions: 0, evictions: 0, expired: 0 };
  /** policy.staleS: the last good reply per question, kept until staleS past its expiry; null = off. */
  private readonly stale: StaleReplies | null;
  /** Questions the cache did not answer (CHAOS and returning loop probes are not questions for it). */
  private misses = 0;

  constructor(o: CachingHandlerOptions) {
    this.cache = o.cache;
    this.policy = o.policy;
    this.forwarder = o.forwarder;
    this.log = o.log;
    this.logQueries = o.logQueries === true;
    this.loop = o.loop;
    this.serversBind = o.serversBind;
    this.tagBase = o.tagBase ?? 0;
    this.statistics = o.statistics;
    this.addSubnet = o.addSubnet === true;
    // A ring of bytes, not an LRU of reply objects: with the asker passed on, most misses' replies are
    // scoped, and keeping each as objects tripled the collector's work per miss.
    this.scoped = this.addSubnet && o.policy.size > 0 ? ReplyRing.forReplies(o.policy.size) : null;
    this.stale = StaleReplies.of(o.policy);
    this.shared = o.sharedStore !== undefined && o.policy.size > 0 && o.sharedStore.maxBytes > 0 ? this.sharedLru(o.sharedStore.maxBytes) : null;
  }

  /** dnsmasq's cache statistics: the cache's own counts, and the misses seen here. */
  counters(): CacheCounters {
    const { insertions, evictions, hits } = this.cache.stats;
    if (this.shared !== null) return { cachesize: this.policy.size, ...this.sharedCounts, hits: hits + this.sharedHits, misses: this.misses };
    return { cachesize: this.policy.size, insertions, evictions, hits, misses: this.misses };
  }

  /** The shared store's counts; null without one. */
  sharedStoreStats(): SharedStoreStats | null {
    if (this.shared === null) return null;
    return { entries: this.shared.size, bytes: this.shared.calculatedSize, ...this.sharedCounts };
  }

  private sharedLru(maxSize: number): LRUCache<string, KeptReply> {
    // No `max` (it would allocate lru-cache's tables for every entry up front): kept() keeps the count bound.
    return new LRUCache<string, KeptReply>({
      maxSize,
      sizeCalculation: (e, key) => ENTRY_OVERHEAD + key.length + e.wire.length,
      dispose: (_e, _key, reason) => {
        if (reason === 'evict') this.sharedCounts.evictions++;
        else if (reason === 'expire') this.sharedCounts.expired++;
      },
    });
  }

  /** For the DnsServers' onCacheHit with --log-queries: the line a handled query would get. */
  readonly logHit = (req: Buffer, nameEnd: number, remoteAddress: string): void => {
    const name = canonicalName(readName(req, { pos: 12 }, nameEnd));
    this.log.info('query', { name, type: u16(req, nameEnd), from: 'cache', client: remoteAddress });
  };

  readonly handle: Handler = (q: Query): Answer | Promise<Answer | null> | null => {
    const { question, message } = q;
    if (question.class === Class.CH) return this.chaos(q.qname, question.type);
    if (this.loop !== undefined && this.loop.caught(q.qname, question.type, question.class)) {
      if (this.logQueries) this.log.info('query', { name: q.qname, type: question.type, from: 'loop-probe', client: q.remoteAddress });
      return null;
    }
    // `plain`: the question's key, for what holds for every asker (serve-stale's copies, the shared
    // store); `key`: the same, or the asker's own where its address goes upstream.
    const plain = questionKey(q.qname, question.type, question.class, message.edns?.do === true, message.cd);
    if (q.prefetch) return this.prefetch(q, plain);
    const shared = this.shared === null ? null : this.agedHit(this.shared, plain);
    if (shared !== null) {
      this.sharedHits++;
      // A hit of the process's one cache (another thread's miss): logged as every hit is.
      if (this.logQueries) this.log.info('query', { name: q.qname, type: question.type, from: 'cache', client: q.remoteAddress });
      return { ...shared, cacheable: shared.ttl > 0, tag: this.tagOf(shared.wire) };
    }
    // The DnsServers answer every hit before the handler: whatever comes here is a miss (an
    // expired entry included, once: the server deleted it).
    this.misses++;
    // --add-subnet: a question for a server in the pod goes with the asker's address, and its reply
    // may hold for this asker alone: asked, shared in flight and kept per asker.
    const asker = this.askerFor(q);
    const key = asker === null ? plain : `${asker} ${plain}`;
    if (asker !== null) {
      const kept = this.scoped?.copy(key, Date.now()) ?? null;
      if (kept !== null) {
        if (this.logQueries) this.log.info('query', { name: q.qname, type: question.type, from: 'cache', client: q.remoteAddress });
        return { wire: kept, tag: this.tagBase + (isDenial(kept) ? AnswerKind.keptDenial : AnswerKind.keptSuccess) };
      }
    }
    const early = asker === null && this.stale?.immediate === true ? this.stale.early(key) : null;
    if (early !== null) return this.earlyAnswer(q, key, early);
    const pending = this.inflight.get(key);
    if (this.logQueries) {
      this.log.info('query', { name: q.qname, type: question.type, from: pending !== undefined ? 'shared' : 'forwarded', client: q.remoteAddress });
    }
    const failed = (err: unknown): Answer => this.failed(q, err, plain);
    if (pending !== undefined) {
      this.stats.shared++;
      // The asker that sent the upstream query stores the answer; once is enough.
      return pending.then((r) => ({ wire: r.wire, tag: this.tagOf(r.wire) }), failed);
    }
    return this.forward(q, key, asker, plain).then((r) => (r.scoped ? { wire: r.wire, tag: this.tagOf(r.wire) } : this.keptAnswer(r)), failed);
  };

  /** A cached answer about to expire (the DnsServer asks: Query.prefetch), asked upstream unless it already is; null: not now. */
  private prefetch(q: Query, plain: string): Promise<Answer | null> | null {
    const asker = this.askerFor(q);
    const key = asker === null ? plain : `${asker} ${plain}`;
    if (this.inflight.has(key)) return null;
    return this.forward(q, key, asker, plain).then(
      (r) => (r.scoped ? null : this.keptAnswer(r)),
      () => null,
    );
  }

  /** --add-subnet: the asker whose address goes with `q` to its servers (those the forwarder takes it at); null: none goes. */
  private askerFor(q: Query): string | null {
    return this.addSubnet && this.forwarder.takesAsker(q.qname) ? q.remoteAddress : null;
  }

  /** An upstream reply as the DnsServer keeps it: for its lifetime, asked again ahead of it where the policy prefetches. */
  private keptAnswer(r: Forwarded): Answer {
    return { wire: r.wire, cacheable: r.ttl > 0, ttl: r.ttl, tag: this.tagOf(r.wire), prefetch: this.policy.prefetch };
  }

  private chaos(qname: string, qtype: number): Answer | Promise<Answer> {
    if (this.statistics === undefined) return { message: chaosReply(qname, qtype, this.counters(), this.serversBind), tag: this.tagBase };
    return this.statistics().then((s) => ({ message: chaosReply(qname, qtype, s.counters, () => s.servers), tag: this.tagBase }));
  }

  private tagOf(wire: Uint8Array): number {
    return this.tagBase + (isDenial(wire) ? AnswerKind.denial : AnswerKind.success);
  }

  /** A copy of a kept reply with its TTLs aged by the whole seconds it was kept, and the seconds it has left; null when none is live. */
  private agedHit(store: LRUCache<string, KeptReply>, key: string): { wire: Uint8Array; ttl: number } | null {
    const e = store.get(key);
    if (e === undefined) return null;
    const age = Math.floor((Date.now() - e.storedAt) / 1000);
    const wire = Buffer.from(e.wire);
    for (const off of e.ttlOffsets) writeTtl(wire, off, Math.max(0, readTtl(wire, off) - age));
    return { wire, ttl: e.ttl - age };
  }

  /**
   * The reply to a question sent with the asker's address, the option taken out (with the OPT we
   * added, `addedOpt`, where the asker sent none): one scoped to the
   * asker kept for it alone (under `key`); any other as every reply is (under `plain`: serve-stale's
   * copy, the shared store).
   */
  private received(reply: Uint8Array, key: string, plain: string, qname: string, addedOpt: boolean): Forwarded {
    const { scope, wire } = takeClientSubnet(reply, addedOpt);
    if (scope <= 0) return this.kept(wire, plain, qname);
    const { ttl, ttlOffsets } = prepareForKeeping(wire, this.policy, qname);
    if (ttl > 0) {
      const now = Date.now();
      this.scoped?.keep(key, wire, ttlOffsets, ttl, now, now + ttl * 1000);
    }
    return { wire, ttl: 0, scoped: true };
  }

  /** After a reload: later askers get a query on the new routes instead of joining one on the old. */
  forgetInflight(): void {
    this.inflight.clear();
    this.scoped?.clear();
    this.shared?.clear();
  }

  /** `key`: the in-flight query's (the asker's own where it is named); `plain`: the question's, for what every asker may share. */
  private forward(q: Query, key: string, asker: string | null, plain = key): Promise<Forwarded> {
    this.stats.forwarded++;
    // The asker's bytes as they came (the server let through only a question and an OPT); the
    // forwarder copies them before setting its own ID. Its reply is ours to rewrite.
    const query = asker === null ? null : withClientSubnet(q.wire, asker);
    const pending =
      query === null
        ? this.forwarder.forward(q.wire, q.qname).then((wire) => this.kept(wire, key, q.qname))
        : this.forwarder.forward(query, q.qname).then((wire) => this.received(wire, key, plain, q.qname, q.message.edns === null));
    this.inflight.set(key, pending);
    const forget = () => {
      if (this.inflight.get(key) === pending) this.inflight.delete(key);
    };
    pending.then(forget, forget);
    return pending;
  }

  /** An upstream reply readied for the cache, and a copy kept for serve-stale and the shared store when it is kept at all. */
  private kept(wire: Uint8Array, key: string, qname: string): Forwarded {
    if (this.stale === null && this.shared === null) return { wire, ttl: prepareForCache(wire, this.policy, qname) };
    const { ttl, ttlOffsets } = prepareForKeeping(wire, this.policy, qname);
    if (ttl > 0) {
      this.stale?.keep(key, wire, ttlOffsets, ttl);
      if (this.shared !== null) {
        // Read only from now on (a hit ages a copy of its own).
        this.shared.set(key, { wire: Buffer.from(wire), ttlOffsets, storedAt: Date.now(), ttl }, { ttl: ttl * 1000 });
        if (this.shared.size > this.policy.size) this.shared.pop();
        this.sharedCounts.insertions++;
      }
    }
    return { wire, ttl };
  }

  /** serve-stale immediate: a reply kept for the question answered without asking upstream; an expired one refreshed behind it. */
  private earlyAnswer(q: Query, key: string, early: EarlyReply): Answer {
    if (this.logQueries) this.log.info('query', { name: q.qname, type: q.question.type, from: early.ttl > 0 ? 'cache' : 'stale', client: q.remoteAddress });
    if (early.ttl > 0) return { wire: early.wire, cacheable: true, ttl: early.ttl, tag: this.tagOf(early.wire) };
    if (!this.inflight.has(key)) this.stale!.refresh(key, () => this.forward(q, key, null));
    this.stats.stale++;
    return { wire: early.wire, tag: this.tagBase + AnswerKind.stale };
  }

  /** The stale reply to a question, every TTL STALE_TTL; null when none is kept. */
  private staleAnswer(key: string): Answer | null {
    const wire = this.stale?.answer(key) ?? null;
    if (wire === null) return null;
    this.stats.stale++;
    return { wire, tag: this.tagBase + AnswerKind.stale };
  }

  private failed(q: Query, err: unknown, key: string): Answer {
    const stale = this.staleAnswer(key);
    if (stale !== null) {
      this.log.debug(1, 'forwarding failed, answered stale', { name: q.qname, err });
      return stale;
    }
    this.stats.failures++;
    const code = err instanceof ForwardError ? err.code : 'unknown';
    this.log.debug(1, 'forwarding failed', { name: q.qname, code, err });
    const m = emptyMessage();
    m.ra = true;
    m.rcode = code === 'FORWARD_OVERLOADED' ? Rcode.REFUSED : code === 'FORWARD_BAD_QUERY' ? Rcode.FORMERR : Rcode.SERVFAIL;
    return { message: m, tag: this.tagBase + AnswerKind.failed };
  }
}
