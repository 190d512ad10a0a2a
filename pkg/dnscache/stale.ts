// serve-stale (RFC 8767): the last good reply to each question, kept `staleS` past its expiry.
// `verify` (dnscache's and node-cache's flags; a Corefile's `serve_stale ... verify`): answered when
// the upstreams fail. `immediate` (a Corefile's unsaid mode, as CoreDNS's): an expired reply is answered
// at once and refreshed behind it, one refresh per question at a time; a reply refreshed so is answered
// from here, aged, until the next miss. Stale answers carry every TTL `staleTtl` (RFC 8767's 30 s
// unsaid). dnscache's, node-cache's and a Corefile kube-dns's forwarded replies.

import { STALE_TTL } from './cache.ts';
import type { CachePolicy } from './cache.ts';
import { AGED, ReplyRing } from './reply-ring.ts';

/** What `early` found: the reply to answer, the seconds it may be kept (0: not), and whether it is to be refreshed. */
export interface EarlyReply {
  wire: Buffer;
  ttl: number;
  refresh: boolean;
}

export class StaleReplies {
  readonly immediate: boolean;
  /** Stale answers given (answer() and early()'s stale copies). */
  served = 0;
  private readonly kept: ReplyRing;
  private readonly staleS: number;
  private readonly staleTtl: number;
  private readonly refreshing = new Set<string>();

  /** `policy`'s serve-stale store; null when it has none (no staleS, or nothing kept). */
  static of(policy: CachePolicy): StaleReplies | null {
    return (policy.staleS ?? 0) > 0 && policy.size > 0 ? new StaleReplies(policy) : null;
  }

  /** About `size` questions (the oldest given up first), each kept `staleS` seconds past its TTL. */
  private constructor(p: CachePolicy) {
    this.kept = ReplyRing.forReplies(p.size);
    this.staleS = p.staleS!;
    this.staleTtl = p.staleTtl ?? STALE_TTL;
    this.immediate = p.staleMode === 'immediate';
  }

  /** A copy of `wire` is the good reply to `key` for `ttl` seconds; its TTLs at `ttlOffsets`. */
  keep(key: string, wire: Uint8Array, ttlOffsets: readonly number[], ttl: number): void {
    const now = Date.now();
    this.kept.keep(key, wire, ttlOffsets, ttl, now, now + (ttl + this.staleS) * 1000);
  }

  /** A copy of the stale reply to `key`, every TTL staleTtl; null when none is kept. */
  answer(key: string): Buffer | null {
    const wire = this.kept.copy(key, Date.now(), this.staleTtl);
    if (wire !== null) this.served++;
    return wire;
  }

  /**
   * `immediate`, on a miss: the reply kept for `key`, aged, with the seconds it has left while good;
   * past them a stale copy, not to be kept, and `refresh` (see refresh()); null when none is kept.
   */
  early(key: string): EarlyReply | null {
    const wire = this.kept.copy(key, Date.now(), AGED, this.staleTtl);
    if (wire === null) return null;
    if (this.kept.leftS > 0) return { wire, ttl: this.kept.leftS, refresh: false };
    this.served++;
    return { wire, ttl: 0, refresh: true };
  }

  /** Runs `fetch` (which keeps what it gets) for `key` unless one already runs for it. */
  refresh(key: string, fetch: () => Promise<unknown>): void {
    if (this.refreshing.has(key)) return;
    this.refreshing.add(key);
    const done = () => this.refreshing.delete(key);
    fetch().then(done, done);
  }
}
