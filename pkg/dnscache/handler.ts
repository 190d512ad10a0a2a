// The DnsServer handler, for what the DnsServers' shared answer cache could not answer: CHAOS
// statistics, then our own loop probes coming back (dropped), then one upstream query per distinct
// question in flight (later askers of the same question wait for it). The reply comes back with
// the lifetime the cache policy gives it, and the DnsServer keeps it for that long.

import { Class, Rcode } from '../dns/constants.ts';
import { canonicalName, readName } from '../dns/codec.ts';
import { u16 } from '../dns/header.ts';
import { emptyMessage } from '../dns/message.ts';
import type { AnswerCache } from '../dns/answer-cache.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import { ForwardError } from '../forward/forward.ts';
import type { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { prepareForCache, questionKey } from './cache.ts';
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
}

/** An upstream reply with TTLs as the cache keeps them, and its lifetime (0 = not kept). */
interface Forwarded {
  wire: Uint8Array;
  ttl: number;
}

export class CachingHandler {
  readonly stats: HandlerStats = { forwarded: 0, shared: 0, failures: 0 };
  private readonly cache: AnswerCache;
  private readonly policy: CachePolicy;
  private readonly forwarder: Forwarder;
  private readonly log: Logger;
  private readonly logQueries: boolean;
  private readonly loop: LoopDetector | undefined;
  private readonly serversBind: (() => string[]) | undefined;
  private readonly inflight = new Map<string, Promise<Forwarded>>();
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
    const key = questionKey(q.qname, question.type, question.class, message.edns?.do === true, message.cd);
    const pending = this.inflight.get(key);
    if (this.logQueries) {
      this.log.info('query', { name: q.qname, type: question.type, from: pending !== undefined ? 'shared' : 'forwarded', client: q.remoteAddress });
    }
    const failed = (err: unknown): Answer => this.failed(q, err);
    if (pending !== undefined) {
      this.stats.shared++;
      // The asker that sent the upstream query stores the answer; once is enough.
      return pending.then((r) => ({ wire: r.wire }), failed);
    }
    return this.forward(q, key).then((r) => ({ wire: r.wire, cacheable: r.ttl > 0, ttl: r.ttl }), failed);
  };

  /** After a reload: later askers get a query on the new routes instead of joining one on the old. */
  forgetInflight(): void {
    this.inflight.clear();
  }

  private forward(q: Query, key: string): Promise<Forwarded> {
    this.stats.forwarded++;
    // The asker's bytes as they came (the server let through only a question and an OPT); the
    // forwarder copies them before setting its own ID. Its reply is ours to rewrite.
    const pending = this.forwarder.forward(q.wire, q.qname).then((wire) => ({ wire, ttl: prepareForCache(wire, this.policy) }));
    this.inflight.set(key, pending);
    const forget = () => {
      if (this.inflight.get(key) === pending) this.inflight.delete(key);
    };
    pending.then(forget, forget);
    return pending;
  }

  private failed(q: Query, err: unknown): Answer {
    this.stats.failures++;
    const code = err instanceof ForwardError ? err.code : 'unknown';
    this.log.debug(1, 'forwarding failed', { name: q.qname, code, err });
    const m = emptyMessage();
    m.ra = true;
    m.rcode = code === 'FORWARD_OVERLOADED' ? Rcode.REFUSED : code === 'FORWARD_BAD_QUERY' ? Rcode.FORMERR : Rcode.SERVFAIL;
    return { message: m };
  }
}
