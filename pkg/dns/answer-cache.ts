// Pre-encoded answers keyed by the lowercased question bytes (plus DO and CD). An entry stored with
// a lifetime expires after it, and the server reduces its records' TTLs by the whole seconds it has
// been kept; one stored without lives until clear() or the LRU pushes it out. A generation number
// lets a handler that started before clear() avoid storing what it computed from old data.

import { LRUCache } from 'lru-cache';
import { coarseSeconds } from './clock.ts';
import type { Clock } from './clock.ts';
import { recordTtlOffsets } from './template.ts';
import type { Template } from './template.ts';

export interface AnswerCacheStats {
  /** get() calls that returned an entry. */
  hits: number;
  /** Entries stored. */
  insertions: number;
  /** Live entries pushed out to make room (expired ones pushed out do not count). */
  evictions: number;
  /** Entries found expired by get() (and deleted). */
  expired: number;
}

interface Entry {
  template: Template;
  /** Clock seconds when stored. */
  storedAt: number;
  /** Clock seconds from which the entry is gone; NEVER without a lifetime. */
  expiresAt: number;
}

const NEVER = Number.POSITIVE_INFINITY;
// lru-cache's get() takes an options object and writes to it; passing one of ours saves
// allocating a default one per hit.
const getOptions: LRUCache.GetOptions<string, Entry, unknown> = {};

export class AnswerCache {
  readonly stats: AnswerCacheStats = { hits: 0, insertions: 0, evictions: 0, expired: 0 };
  /** The entries it can hold; 0 = it holds none. */
  readonly max: number;
  /** Bumped by clear(); compare before storing an answer computed asynchronously. */
  generation = 0;
  /** Set by get(): whole seconds the entry it returned has been kept (0 for one without a lifetime). */
  age = 0;
  private readonly lru: LRUCache<string, Entry> | null;
  private readonly clock: Clock;

  /** `clock` gives whole seconds (a test may step it); default: coarseSeconds. */
  constructor(max: number, clock: Clock = coarseSeconds) {
    this.max = max > 0 ? max : 0;
    this.clock = clock;
    this.lru =
      this.max > 0
        ? new LRUCache<string, Entry>({
            max: this.max,
            dispose: (entry, _key, reason) => {
              // Only live entries count; the clock is not read for entries without a lifetime.
              if (reason === 'evict' && (entry.expiresAt === NEVER || entry.expiresAt > this.clock())) this.stats.evictions++;
            },
          })
        : null;
  }

  /** The entry for `key`, or undefined. An expired entry is deleted and reads as undefined. */
  get(key: string): Template | undefined {
    if (this.lru === null) return undefined;
    const entry = this.lru.get(key, getOptions);
    if (entry === undefined) return undefined;
    let age = 0;
    if (entry.expiresAt !== NEVER) {
      const now = this.clock();
      if (now >= entry.expiresAt) {
        this.lru.delete(key);
        this.stats.expired++;
        return undefined;
      }
      age = now - entry.storedAt;
    }
    this.age = age;
    this.stats.hits++;
    return entry.template;
  }

  /**
   * Stores `t` unless the cache was cleared since `generation` was read. With `ttl` (seconds;
   * fractions dropped), the entry expires after it and its records' TTLs are served reduced by its
   * age; a ttl under 1 is not stored.
   */
  set(key: string, t: Template, generation: number, ttl?: number): void {
    if (this.lru === null || generation !== this.generation) return;
    let storedAt = 0;
    let expiresAt = NEVER;
    if (ttl !== undefined) {
      const seconds = Math.floor(ttl);
      if (!(seconds >= 1)) return;
      if (t.ttlOffsets === null) t.ttlOffsets = recordTtlOffsets(t);
      storedAt = this.clock();
      expiresAt = storedAt + seconds;
    }
    this.lru.set(key, { template: t, storedAt, expiresAt });
    this.stats.insertions++;
  }

  clear(): void {
    this.generation++;
    this.lru?.clear();
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }
}
