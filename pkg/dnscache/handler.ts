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
import type { AnswerCache } from '../dns/answer-cache.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import { ForwardError } from '../forward/forward.ts';
import type { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { prepareForCache, prepareForKeeping, questionKey, STALE_TTL } from './cache.ts';
import { readTtl, writeTtl } from '../dns/walk.ts';
import type { CachePolicy } from './cache.ts';
import type { LoopDetector } from './loop.ts';
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
  /** --add-subnet: the asker's address goes to servers on loopback, and replies scoped to it are kept for it alone. */
  addSubnet?: boolean;
}

/** An upstream reply with TTLs as the cache keeps them, and its lifetime (0 = not kept). */
interface Forwarded {
  wire: Uint8Array;
  ttl: number;
  /** The server scoped it to the asker (a Client Subnet scope above 0): never in the shared cache. */
  scoped?: boolean;
}

/** serve-stale: the last good reply to a question and where its TTLs are, kept past its expiry. */
interface StaleEntry {
  wire: Uint8Array;
  ttlOffsets: readonly number[];
}

/** A reply kept for one asker: its bytes, where its TTLs are, and when it was kept. */
interface ScopedEntry {
  wire: Uint8Array;
  ttlOffsets: readonly number[];
  storedAt: number;
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
  private readonly inflight = new Map<string, Promise<Forwarded>>();
  private readonly addSubnet: boolean;
  /** --add-subnet: replies scoped to one asker, by `<asker> <question key>`; null without it or a cache. */
  private readonly scoped: LRUCache<string, ScopedEntry> | null;
  /** policy.staleS: the last good reply per question, kept until staleS past its expiry; null = off. */
  private readonly stale: LRUCache<string, StaleEntry> | null;
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
    this.addSubnet = o.addSubnet === true;
    this.scoped = this.addSubnet && o.policy.size > 0 ? new LRUCache({ max: o.policy.size }) : null;
    this.stale = (o.policy.staleS ?? 0) > 0 && o.policy.size > 0 ? new LRUCache({ max: o.policy.size }) : null;
  }

  /** dnsmasq's cache statistics: the cache's own counts, and the misses seen here. */
  counters(): CacheCounters {
    const { insertions, evictions, hits } = this.cache.stats;
    return { cachesize: this.policy.size, insertions, evictions, hits, misses: this.misses };
  }

  /** For the DnsServers' onCacheHit with --log-queries: the line a handled query would get. */
  readonly logHit = (req: Buffer, nameEnd: number, remoteAddress: string): void => {
    const name = canonicalName(readName(req, { pos: 12 }, nameEnd));
    this.log.info('query', { name, type: u16(req, nameEnd), from: 'cache', client: remoteAddress });
  };

  readonly handle: Handler = (q: Query): Answer | Promise<Answer> | null => {
    const { question, message } = q;
    if (question.class === Class.CH) return { message: chaosReply(q.qname, question.type, this.counters(), this.serversBind) };
    if (this.loop !== undefined && this.loop.caught(q.qname, question.type, question.class)) {
      if (this.logQueries) this.log.info('query', { name: q.qname, type: question.type, from: 'loop-probe', client: q.remoteAddress });
      return null;
    }
    // The DnsServers answer every hit before the handler: whatever comes here is a miss (an
    // expired entry included, once: the server deleted it).
    this.misses++;
    let key = questionKey(q.qname, question.type, question.class, message.edns?.do === true, message.cd);
    // --add-subnet: a question for a server in the pod goes with the asker's address, and its reply
    // may hold for this asker alone: asked, shared in flight and kept per asker.
    const asker = this.addSubnet && this.forwarder.isLocal(q.qname) ? q.remoteAddress : null;
    if (asker !== null) {
      key = `${asker} ${key}`;
      const kept = this.scopedHit(key);
      if (kept !== null) {
        if (this.logQueries) this.log.info('query', { name: q.qname, type: question.type, from: 'cache', client: q.remoteAddress });
        return { wire: kept };
      }
    }
    const pending = this.inflight.get(key);
    if (this.logQueries) {
      this.log.info('query', { name: q.qname, type: question.type, from: pending !== undefined ? 'shared' : 'forwarded', client: q.remoteAddress });
    }
    const failed = (err: unknown): Answer => this.failed(q, err, key);
    if (pending !== undefined) {
      this.stats.shared++;
      // The asker that sent the upstream query stores the answer; once is enough.
      return pending.then((r) => ({ wire: r.wire }), failed);
    }
    return this.forward(q, key, asker).then((r) => (r.scoped ? { wire: r.wire } : { wire: r.wire, cacheable: r.ttl > 0, ttl: r.ttl }), failed);
  };

  /** A kept scoped reply with its TTLs aged by the whole seconds it was kept; null when none is live. */
  private scopedHit(key: string): Uint8Array | null {
    const e = this.scoped?.get(key);
    if (e === undefined) return null;
    const age = Math.floor((Date.now() - e.storedAt) / 1000);
    const wire = Buffer.from(e.wire);
    for (const off of e.ttlOffsets) writeTtl(wire, off, Math.max(0, readTtl(wire, off) - age));
    return wire;
  }

  /** The reply to a question sent with the asker's address: scoped ones kept for the asker, the option taken out. */
  private received(reply: Uint8Array, key: string): Forwarded {
    const { scope, wire } = takeClientSubnet(reply);
    const { ttl, ttlOffsets } = prepareForKeeping(wire, this.policy);
    if (scope <= 0) return { wire, ttl };
    if (ttl > 0) this.scoped?.set(key, { wire, ttlOffsets, storedAt: Date.now() }, { ttl: ttl * 1000 });
    return { wire, ttl: 0, scoped: true };
  }

  /** After a reload: later askers get a query on the new routes instead of joining one on the old. */
  forgetInflight(): void {
    this.inflight.clear();
    this.scoped?.clear();
  }

  private forward(q: Query, key: string, asker: string | null): Promise<Forwarded> {
    this.stats.forwarded++;
    // The asker's bytes as they came (the server let through only a question and an OPT); the
    // forwarder copies them before setting its own ID. Its reply is ours to rewrite.
    const query = asker === null ? null : withClientSubnet(q.wire, asker);
    const pending =
      query === null
        ? this.forwarder.forward(q.wire, q.qname).then((wire) => this.keptStale(wire, key))
        : this.forwarder.forward(query, q.qname).then((wire) => this.received(wire, key));
    this.inflight.set(key, pending);
    const forget = () => {
      if (this.inflight.get(key) === pending) this.inflight.delete(key);
    };
    pending.then(forget, forget);
    return pending;
  }

  /** An upstream reply readied for the cache, and its copy kept for serve-stale when it is kept at all. */
  private keptStale(wire: Uint8Array, key: string): Forwarded {
    if (this.stale === null) return { wire, ttl: prepareForCache(wire, this.policy) };
    const { ttl, ttlOffsets } = prepareForKeeping(wire, this.policy);
    if (ttl > 0) this.stale.set(key, { wire: Buffer.from(wire), ttlOffsets }, { ttl: (ttl + this.policy.staleS!) * 1000 });
    return { wire, ttl };
  }

  /** The stale reply to a question, every TTL STALE_TTL; null when none is kept. */
  private staleAnswer(key: string): Answer | null {
    const e = this.stale?.get(key);
    if (e === undefined) return null;
    const wire = Buffer.from(e.wire);
    for (const off of e.ttlOffsets) writeTtl(wire, off, STALE_TTL);
    this.stats.stale++;
    return { wire };
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
    return { message: m };
  }
}
