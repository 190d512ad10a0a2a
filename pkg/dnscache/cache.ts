// The answer cache: whole upstream replies kept in an LRU, each with the time it was stored. A hit is
// a copy whose TTLs are reduced by the whole seconds it has been kept.

import { LRUCache } from 'lru-cache';
import { Rcode } from '../dns/constants.ts';
import { readTtl, writeTtl } from '../dns/walk.ts';
import { readReplyShape } from './records.ts';

export interface CachePolicy {
  /** Entries; 0 = keep nothing. */
  size: number;
  noNegcache: boolean;
  /** Seconds for a negative answer with no SOA; 0 = do not keep it. */
  negTtl: number;
  minCacheTtl: number;
  /** 0 = no cap. */
  maxCacheTtl: number;
}

export interface CacheStats {
  insertions: number;
  /** Live entries pushed out to make room (as dnsmasq counts them). */
  evictions: number;
  hits: number;
  misses: number;
}

interface Entry {
  /** The reply with every TTL already clamped to the cache policy. */
  bytes: Uint8Array;
  ttlOffsets: number[];
  storedAt: number;
  /** Seconds the entry lives. */
  ttl: number;
}

/** Clamps a TTL by --min-cache-ttl / --max-cache-ttl. */
export function clampTtl(ttl: number, p: Pick<CachePolicy, 'minCacheTtl' | 'maxCacheTtl'>): number {
  let t = Math.max(ttl, p.minCacheTtl);
  if (p.maxCacheTtl > 0) t = Math.min(t, p.maxCacheTtl);
  return t;
}

/**
 * How long a reply may be kept, in seconds; 0 = not at all. TC and every rcode other than NOERROR
 * and NXDOMAIN are never kept. A negative answer (NXDOMAIN, or NOERROR with no answer) lives for its
 * SOA's min(TTL, MINIMUM) (RFC 2308), or --neg-ttl without an SOA.
 */
export function cacheTtl(reply: Uint8Array, p: CachePolicy): number {
  const shape = readReplyShape(reply);
  if (shape === null || shape.truncated) return 0;
  if (shape.rcode !== Rcode.NOERROR && shape.rcode !== Rcode.NXDOMAIN) return 0;
  const negative = shape.rcode === Rcode.NXDOMAIN || shape.answerCount === 0;
  if (negative) {
    if (p.noNegcache) return 0;
    const ttl = shape.soaNegativeTtl >= 0 ? shape.soaNegativeTtl : p.negTtl;
    return ttl > 0 ? clampTtl(ttl, p) : 0;
  }
  return clampTtl(shape.minTtl, p);
}

export class AnswerCache {
  readonly stats: CacheStats = { insertions: 0, evictions: 0, hits: 0, misses: 0 };
  readonly policy: CachePolicy;
  private readonly lru: LRUCache<string, Entry> | null;
  private readonly now: () => number;

  /** `now` is the clock in milliseconds (Date.now unless a test steps time itself). */
  constructor(policy: CachePolicy, now: () => number = Date.now) {
    this.policy = policy;
    this.now = now;
    this.lru =
      policy.size > 0
        ? new LRUCache<string, Entry>({
            max: policy.size,
            dispose: (entry, _key, reason) => {
              // Only live entries pushed out for room count, as dnsmasq's evictions.bind does.
              if (reason === 'evict' && !this.expired(entry, this.now())) this.stats.evictions++;
            },
          })
        : null;
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  /** A fresh copy of the reply with TTLs decreased by its age, or undefined (counted as a miss). */
  get(key: string): Uint8Array | undefined {
    const entry = this.lru?.get(key);
    const now = this.now();
    if (entry === undefined || this.expired(entry, now)) {
      if (entry !== undefined) this.lru!.delete(key);
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    const age = Math.floor((now - entry.storedAt) / 1000);
    const out = Buffer.allocUnsafe(entry.bytes.length);
    out.set(entry.bytes);
    for (const off of entry.ttlOffsets) writeTtl(out, off, Math.max(0, readTtl(out, off) - age));
    return out;
  }

  /** Keeps `reply` if the policy allows; returns the seconds it will live (0 = not kept). */
  set(key: string, reply: Uint8Array): number {
    if (this.lru === null) return 0;
    const ttl = cacheTtl(reply, this.policy);
    if (ttl <= 0) return 0;
    const shape = readReplyShape(reply)!;
    const bytes = Uint8Array.from(reply);
    // No record may claim more time than the entry has (a negative answer's SOA included).
    for (const off of shape.ttlOffsets) writeTtl(bytes, off, Math.min(ttl, clampTtl(readTtl(bytes, off), this.policy)));
    this.lru.set(key, { bytes, ttlOffsets: shape.ttlOffsets, storedAt: this.now(), ttl });
    this.stats.insertions++;
    return ttl;
  }

  clear(): void {
    this.lru?.clear();
  }

  private expired(entry: Entry, now: number): boolean {
    return now - entry.storedAt >= entry.ttl * 1000;
  }
}

/** name (lowercased) + type + class + DO + CD: replies differ on each of these. */
export function cacheKey(qname: string, type: number, qclass: number, dnssecOk: boolean, checkingDisabled: boolean): string {
  return `${qname}|${type}|${qclass}|${dnssecOk ? 1 : 0}${checkingDisabled ? 1 : 0}`;
}
