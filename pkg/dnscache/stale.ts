// serve-stale (RFC 8767): the last good reply to each question, kept `staleS` past its expiry, for
// when the upstreams fail: answered with every TTL STALE_TTL. dnscache's, node-cache's and a
// Corefile kube-dns's forwarded replies.

import { LRUCache } from 'lru-cache';
import { writeTtl } from '../dns/walk.ts';
import { STALE_TTL } from './cache.ts';

interface StaleEntry {
  wire: Uint8Array;
  ttlOffsets: readonly number[];
}

export class StaleReplies {
  private readonly kept: LRUCache<string, StaleEntry>;
  private readonly staleS: number;

  /** At most `capacity` questions, each kept `staleS` seconds past its TTL. */
  constructor(capacity: number, staleS: number) {
    this.kept = new LRUCache({ max: capacity });
    this.staleS = staleS;
  }

  /** `wire` (read only from now on: the caller's copy) is the good reply to `key` for `ttl` seconds; its TTLs at `ttlOffsets`. */
  keep(key: string, wire: Uint8Array, ttlOffsets: readonly number[], ttl: number): void {
    this.kept.set(key, { wire, ttlOffsets }, { ttl: (ttl + this.staleS) * 1000 });
  }

  /** A copy of the stale reply to `key`, every TTL STALE_TTL; null when none is kept. */
  answer(key: string): Buffer | null {
    const e = this.kept.get(key);
    if (e === undefined) return null;
    const wire = Buffer.from(e.wire);
    for (const off of e.ttlOffsets) writeTtl(wire, off, STALE_TTL);
    return wire;
  }
}
