// The DnsServer handler: CHAOS statistics, then our own loop probes coming back (dropped), then the
// cache, then one upstream query per distinct question in flight (later askers of the same question
// wait for it), stored on the way back.

import { Class, Rcode } from '../dns/constants.ts';
import { encodeMessage } from '../dns/codec.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import { ForwardError } from '../forward/forward.ts';
import type { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { cacheKey } from './cache.ts';
import type { AnswerCache } from './cache.ts';
import type { LoopDetector } from './loop.ts';
import { chaosReply } from './stats.ts';

export interface HandlerStats {
  /** Upstream queries sent (one per distinct question in flight). */
  forwarded: number;
  /** Askers that waited on another asker's upstream query instead of sending their own. */
  shared: number;
  /** Answered SERVFAIL/REFUSED/FORMERR because forwarding failed. */
  failures: number;
}

export interface CachingHandlerOptions {
  cache: AnswerCache;
  forwarder: Forwarder;
  log: Logger;
  /** --log-queries: one info line per query (name, type, where the answer came from). */
  logQueries?: boolean;
  /** --dns-loop-detect: returning probes are dropped before the cache (no miss, nothing cached). */
  loop?: LoopDetector;
  /** servers.bind's strings; without it servers.bind is refused like any unknown CHAOS name. */
  serversBind?: () => string[];
}

export class CachingHandler {
  readonly stats: HandlerStats = { forwarded: 0, shared: 0, failures: 0 };
  private readonly cache: AnswerCache;
  private readonly forwarder: Forwarder;
  private readonly log: Logger;
  private readonly logQueries: boolean;
  private readonly loop: LoopDetector | undefined;
  private readonly serversBind: (() => string[]) | undefined;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();

  constructor(o: CachingHandlerOptions) {
    this.cache = o.cache;
    this.forwarder = o.forwarder;
    this.log = o.log;
    this.logQueries = o.logQueries === true;
    this.loop = o.loop;
    this.serversBind = o.serversBind;
  }

  readonly handle: Handler = (q: Query): Answer | Promise<Answer> | null => {
    const { question, message } = q;
    if (question.class === Class.CH) return { message: chaosReply(q.qname, question.type, this.cache, this.serversBind) };
    if (this.loop !== undefined && this.loop.caught(q.qname, question.type, question.class)) {
      if (this.logQueries) this.log.info('query', { name: q.qname, type: question.type, from: 'loop-probe', client: q.remoteAddress });
      return null;
    }
    const key = cacheKey(q.qname, question.type, question.class, message.edns?.do === true, message.cd);
    const hit = this.cache.get(key);
    let pending = hit === undefined ? this.inflight.get(key) : undefined;
    if (this.logQueries) {
      const from = hit !== undefined ? 'cache' : pending !== undefined ? 'shared' : 'forwarded';
      this.log.info('query', { name: q.qname, type: question.type, from, client: q.remoteAddress });
    }
    if (hit !== undefined) return { wire: hit };
    if (pending !== undefined) this.stats.shared++;
    else pending = this.forward(q, key);
    return pending.then(
      (wire) => ({ wire }),
      (err: unknown) => this.failed(q, err),
    );
  };

  private forward(q: Query, key: string): Promise<Uint8Array> {
    this.stats.forwarded++;
    const request = { ...q.message, questions: [q.question], answers: [], authorities: [], additionals: [] };
    const pending = this.forwarder.forward(encodeMessage(request).bytes, q.qname).then((reply) => {
      this.cache.set(key, reply);
      return reply;
    });
    this.inflight.set(key, pending);
    const forget = () => {
      this.inflight.delete(key);
    };
    pending.then(forget, forget);
    return pending;
  }

  private failed(q: Query, err: unknown): Answer {
    this.stats.failures++;
    const code = err instanceof ForwardError ? err.code : 'unknown';
    this.log.debug(1, 'forwarding failed', { name: q.qname, code, error: err });
    const m = emptyMessage();
    m.ra = true;
    m.rcode = code === 'FORWARD_OVERLOADED' ? Rcode.REFUSED : code === 'FORWARD_BAD_QUERY' ? Rcode.FORMERR : Rcode.SERVFAIL;
    return { message: m };
  }
}
