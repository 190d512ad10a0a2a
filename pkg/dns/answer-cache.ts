// Pre-encoded answers keyed by the lowercased question bytes (plus DO and CD), bounded by the bytes
// they take (an estimate of each entry's whole footprint, see README "Memory"), and optionally by a
// count. An entry stored with a lifetime expires after it, and the server reduces its records' TTLs
// by the whole seconds it has been kept; one stored without lives until clear() or the LRU pushes it
// out. Entries stored in a group are dropped together by forget(group): a group's stamp is read when
// an entry is stored and checked when it is read, so forgetting costs nothing per entry. A generation
// number lets a handler that started before clear() or forget() avoid storing what it computed from
// old data.

import { LRUCache } from 'lru-cache';
import { coarseSeconds } from './clock.ts';
import { Rcode } from './constants.ts';
import type { Clock } from './clock.ts';
import { NEVER_EXPIRES, recordTtlOffsets } from './template.ts';
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
  /** Entries found forgotten (their group's) by get() or peek() (and deleted). */
  forgotten: number;
}

export interface AnswerCacheOptions {
  /** What the entries may take, in bytes (entryBytes of each); 0 = hold nothing. */
  maxBytes: number;
  /** At most this many entries too (dnsmasq's --cache-size); default: only the bytes bound. */
  maxEntries?: number;
  /** Whole seconds (a test may step it); default coarseSeconds. */
  clock?: Clock;
}

/**
 * What an entry is taken to cost beyond its strings' characters and its offset tables: the template
 * object (18 fields), the two string headers, and lru-cache's slots (Map entry, key/value/size
 * arrays, links). Measured with 100,000 entries on Node 24 (README, "Memory").
 */
export const ENTRY_OVERHEAD = 328;

/** The bytes an entry of `key` → `t` is counted as. */
export function entryBytes(key: string, t: Template): number {
  const tables = (t.ttlOffsets?.length ?? 0) + (t.answerEnds?.length ?? 0) + (t.pointers?.length ?? 0);
  return ENTRY_OVERHEAD + key.length + t.bytes.length + (t.opt?.length ?? 0) + 2 * tables;
}

/** Where AnswerCache.timed counts an entry: its Answer.tag, and whether it is a denial (NXDOMAIN, or NOERROR without an answer). */
export function timedSlot(tag: number, denial: boolean): number {
  return tag * 2 + (denial ? 1 : 0);
}

const timedSlotOf = (t: Template) => timedSlot(t.tag, t.rcode === Rcode.NXDOMAIN || (t.rcode === Rcode.NOERROR && t.answerEnd === t.questionEnd));

function bump(counts: number[], slot: number, by: number): void {
  counts[slot] = (counts[slot] ?? 0) + by;
}

// lru-cache's get() takes an options object and writes to it; passing one of ours saves
// allocating a default one per hit.
const getOptions: LRUCache.GetOptions<string, Template, unknown> = {};

export class AnswerCache {
  readonly stats: AnswerCacheStats = { hits: 0, insertions: 0, evictions: 0, expired: 0, forgotten: 0 };
  readonly maxBytes: number;
  /** 0 = no count bound. */
  readonly maxEntries: number;
  /** Bumped by clear() and forget(); compare before storing an answer computed asynchronously. */
  generation = 0;
  /** Set by get(): whole seconds the entry it returned has been kept (0 for one without a lifetime). */
  age = 0;
  /** Set by get(): the entry it returned is to be asked again of its source now (its HitFrequency). */
  prefetchDue = false;
  /**
   * Entries stored with a lifetime (a forwarder's replies) held now, and those pushed out while live,
   * by timedSlot(tag, denial): what CoreDNS's cache counts as its entries and evictions by type.
   */
  readonly timed = { entries: [] as number[], evictions: [] as number[] };
  private readonly lru: LRUCache<string, Template> | null;
  private readonly clock: Clock;
  /** Group → the stamp its live entries carry; a forgotten group is deleted, and a new stamp drawn. */
  private readonly stamps = new Map<string, number>();
  private lastStamp = 0;

  constructor(o: AnswerCacheOptions) {
    this.maxBytes = o.maxBytes > 0 ? Math.floor(o.maxBytes) : 0;
    this.maxEntries = o.maxEntries !== undefined && o.maxEntries > 0 ? Math.floor(o.maxEntries) : 0;
    this.clock = o.clock ?? coarseSeconds;
    const holdsNothing = this.maxBytes === 0 || (o.maxEntries !== undefined && this.maxEntries === 0);
    this.lru = holdsNothing
      ? null
      : new LRUCache<string, Template>({
          // No `max`: lru-cache would allocate its tables for that many entries up front (node-cache's
          // 79,872: ~2.4 MiB at rest); set() keeps the count bound instead.
          maxSize: this.maxBytes,
          sizeCalculation: (t, key) => entryBytes(key, t),
          dispose: (t, _key, reason) => {
            // Only live entries count; the clock is not read for entries without a lifetime.
            const timed = t.expiresAt !== NEVER_EXPIRES;
            const live = reason === 'evict' && (!timed || t.expiresAt > this.clock());
            if (live) this.stats.evictions++;
            if (!timed) return;
            const slot = timedSlotOf(t);
            bump(this.timed.entries, slot, -1);
            if (live) bump(this.timed.evictions, slot, 1);
          },
        });
  }

  /** The entry for `key`, or undefined. An expired entry is deleted and reads as undefined. */
  get(key: string): Template | undefined {
    if (this.lru === null) return undefined;
    const t = this.lru.get(key, getOptions);
    if (t === undefined || this.isForgotten(key, t)) return undefined;
    let age = 0;
    let due = false;
    if (t.expiresAt !== NEVER_EXPIRES) {
      const now = this.clock();
      if (now >= t.expiresAt) {
        this.lru.delete(key);
        this.stats.expired++;
        return undefined;
      }
      age = now - t.storedAt;
      if (t.freq !== null) due = t.freq.hit(now, t.storedAt, t.expiresAt);
    }
    this.age = age;
    this.prefetchDue = due;
    this.stats.hits++;
    return t;
  }

  /** An entry without a lifetime, looked up without counting a hit (the server's shared templates). */
  peek(key: string): Template | undefined {
    const t = this.lru?.get(key, getOptions);
    return t === undefined || this.isForgotten(key, t) ? undefined : t;
  }

  private isForgotten(key: string, t: Template): boolean {
    if (t.group === null || this.stamps.get(t.group) === t.stamp) return false;
    this.lru!.delete(key);
    this.stats.forgotten++;
    return true;
  }

  /**
   * Stores `t` unless the cache was cleared since `generation` was read. With `ttl` (seconds;
   * fractions dropped), the entry expires after it and its records' TTLs are served reduced by its
   * age; a ttl under 1 is not stored. With `group`, forget(group) drops it. A template is stored
   * under one key only.
   */
  set(key: string, t: Template, generation: number, ttl?: number, group?: string): void {
    if (this.lru === null || generation !== this.generation) return;
    if (group !== undefined) {
      let stamp = this.stamps.get(group);
      if (stamp === undefined) this.stamps.set(group, (stamp = ++this.lastStamp));
      t.group = group;
      t.stamp = stamp;
    }
    if (ttl !== undefined) {
      const seconds = Math.floor(ttl);
      if (!(seconds >= 1)) return;
      if (t.ttlOffsets === null) t.ttlOffsets = recordTtlOffsets(t);
      t.storedAt = this.clock();
      t.expiresAt = t.storedAt + seconds;
    }
    this.lru.set(key, t);
    // An entry bigger than the whole budget is not stored.
    if (!this.lru.has(key)) return;
    if (this.maxEntries > 0 && this.lru.size > this.maxEntries) this.lru.pop();
    this.stats.insertions++;
    if (ttl !== undefined) bump(this.timed.entries, timedSlotOf(t), 1);
  }

  clear(): void {
    this.generation++;
    this.stamps.clear();
    this.lru?.clear();
  }

  /** Drops every entry stored in one of `groups` (each found gone when next read, or pushed out). */
  forget(groups: Iterable<string>): void {
    this.generation++;
    for (const g of groups) this.stamps.delete(g);
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  /** What the entries are counted as taking, in bytes (at most maxBytes). */
  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }
}
