// Prefetch (CoreDNS's `cache { prefetch AMOUNT [DURATION [PERCENTAGE%]] }`): an answer asked AMOUNT
// times with no gap of DURATION or more between the asks is asked again of its source once its TTL
// is down to PERCENTAGE of what it was stored with (at least its last second), so a popular name
// never expires. The counts live beside the entry, in an object only entries of a prefetching cache
// have; a hit of any other entry reads one null.

/** When a cached answer is asked again ahead of its expiry. */
export interface PrefetchRule {
  /** Asks needed (AMOUNT); at least 1. */
  amount: number;
  /** Whole seconds: a gap longer than this starts the count again (DURATION, CoreDNS's 1m unsaid). */
  windowS: number;
  /** 10-90 (PERCENTAGE, CoreDNS's 10% unsaid). */
  percent: number;
}

/** One entry's asks, under its rule. */
export class HitFrequency {
  readonly rule: PrefetchRule;
  private hits = 0;
  private last = 0;
  /** A prefetch of this entry is under way (or done): no second one. */
  refreshing = false;

  constructor(rule: PrefetchRule) {
    this.rule = rule;
  }

  /** The counts for the entry a prefetch stores in this one's place (kept, as CoreDNS keeps them). */
  carriedTo(rule: PrefetchRule): HitFrequency {
    const f = new HitFrequency(rule);
    f.hits = this.hits;
    f.last = this.last;
    return f;
  }

  /**
   * Counts an ask at clock second `now` of an entry stored at `storedAt` until `expiresAt`; true
   * (once) when the entry is to be prefetched now.
   */
  hit(now: number, storedAt: number, expiresAt: number): boolean {
    const r = this.rule;
    this.hits = now - this.last > r.windowS ? 1 : this.hits + 1;
    this.last = now;
    if (this.refreshing || this.hits < r.amount) return false;
    if (expiresAt - now > Math.ceil((r.percent * (expiresAt - storedAt)) / 100)) return false;
    this.refreshing = true;
    return true;
  }
}
