// `cache [TTL] [ZONES...] { success CAP [TTL [MINTTL]]; denial CAP [TTL [MINTTL]]; prefetch AMOUNT
// [DURATION [PERCENTAGE%]]; serve_stale [DURATION] [immediate|verify ...]; disable success|denial
// [ZONES...] }`: TTL caps (CoreDNS's defaults: 3600 s, denials 1800 s), capacities (9984 each), the
// zones whose replies are kept (none written: the block's), prefetch (pkg/dns prefetch.ts; 1m and 10%
// unsaid), serve-stale (RFC 8767; 1 h when no duration is given, immediate unless `verify`), the zones
// whose answers or denials are not kept (none written: every zone). Other options are refused (not
// served yet).

import { normalizeDomain } from '../../config/config.ts';
import { duration, invalid, unserved, wholeNumber, written } from '../args.ts';
import type { Directive } from '../read.ts';
import { STALE_TTL } from '../../dnscache/cache.ts';
import type { CachePolicy } from '../../dnscache/cache.ts';
import type { PrefetchRule } from '../../dns/prefetch.ts';

/** CoreDNS's cache defaults: 9984 entries each for answers and denials, TTLs capped at an hour (denials 30 min). */
export const CACHE_CAPACITY = 9984;
const MAX_TTL = 3600;
const MAX_DENIAL_TTL = 1800;
const STALE_DEFAULT_MS = 3600 * 1000;
/** CoreDNS's prefetch defaults: asks with no gap of a minute, from 10% of the TTL left. */
const PREFETCH_WINDOW_S = 60;
const PREFETCH_PERCENT = 10;
/** CoreDNS's cache: no reply kept (nor answered) with a TTL under 5 s unless MINTTL says otherwise. */
const MIN_TTL = 5;

export interface CacheOptions {
  successCapacity: number;
  /** Seconds an answer is kept at most. */
  successTtl: number;
  denialCapacity: number;
  /** Seconds an NXDOMAIN or NODATA is kept at most. */
  denialTtl: number;
  /** Seconds a reply is kept at least, its TTLs raised to it (CoreDNS's MINTTL: 5 unsaid). */
  successMinTtl: number;
  denialMinTtl: number;
  /** serve_stale: seconds past expiry an answer may still be served; 0 = off. */
  staleS: number;
  /** serve_stale's mode: `immediate` (CoreDNS's unsaid) answers an expired reply at once and refreshes it behind; `verify` asks first. */
  staleMode: 'immediate' | 'verify';
  /** serve_stale's RESPONSE_TTL: stale answers' TTL (RFC 8767's 30 s unsaid; CoreDNS's 0 breaks its rule). */
  staleTtl: number;
  /** ZONES: the only zones (lowercase, no trailing dot; '' is every zone) whose replies are kept; null: the block's. */
  zones: string[] | null;
  /** `disable success|denial ZONES`: zones not kept. */
  disable: { success: string[]; denial: string[] };
  /** Zones the cache does not see (a program's: kube-dns's stub blocks without a cache); none written. */
  bypass: string[];
  /** `prefetch`; null: none (or AMOUNT 0). */
  prefetch: PrefetchRule | null;
}

const zoneOf = (z: string) => (z === '.' ? '' : normalizeDomain(z));

export function cacheOptions(d: Directive): CacheOptions {
  // As CoreDNS: a first argument that is a number is the TTL, the rest are zones.
  const ttl = d.args.length > 0 && /^\d+$/.test(d.args[0]) ? wholeNumber(d, d.args[0], 'the TTL', 0) : null;
  const zones = d.args.slice(ttl === null ? 0 : 1).map(zoneOf);
  // CoreDNS takes `cache 30s` for a zone named 30s: a cache that keeps nothing anyone asks.
  const durationLike = zones.find((z) => /^\d+(ms|s|m|h)$/.test(z));
  if (durationLike !== undefined) throw invalid(d, `${JSON.stringify(durationLike)} would be a zone: the TTL is whole seconds (30, not 30s)`);
  const c: CacheOptions = { successCapacity: CACHE_CAPACITY, successTtl: ttl ?? MAX_TTL, successMinTtl: MIN_TTL, denialCapacity: CACHE_CAPACITY, denialTtl: ttl ?? MAX_DENIAL_TTL, denialMinTtl: MIN_TTL, staleS: 0, staleMode: 'immediate', staleTtl: STALE_TTL, zones: zones.length > 0 ? zones : null, disable: { success: [], denial: [] }, bypass: [], prefetch: null };
  for (const o of d.block ?? []) {
    if ((o.name === 'success' || o.name === 'denial') && o.args.length >= 1 && o.args.length <= 3 && o.block === null) {
      const capacity = wholeNumber(o, o.args[0], 'the capacity', 1);
      const max = o.args.length >= 2 ? wholeNumber(o, o.args[1], 'the TTL', 0) : null;
      const min = o.args.length === 3 ? wholeNumber(o, o.args[2], 'the minimum TTL', 0) : MIN_TTL;
      if (o.name === 'success') [c.successCapacity, c.successTtl, c.successMinTtl] = [capacity, max ?? c.successTtl, min];
      else [c.denialCapacity, c.denialTtl, c.denialMinTtl] = [capacity, max ?? c.denialTtl, min];
    } else if (o.name === 'disable' && (o.args[0] === 'success' || o.args[0] === 'denial') && o.block === null) {
      c.disable[o.args[0]].push(...(o.args.length === 1 ? [''] : o.args.slice(1).map(zoneOf)));
    } else if (o.name === 'serve_stale' && o.block === null) {
      serveStale(o, c);
    } else if (o.name === 'prefetch' && o.args.length >= 1 && o.args.length <= 3 && o.block === null) {
      c.prefetch = prefetchRule(o);
    } else {
      throw unserved(o, `cache option \`${written(o)}\``);
    }
  }
  return c;
}

/** `prefetch AMOUNT [DURATION [PERCENTAGE%]]`, as CoreDNS reads it: AMOUNT 0 is none, the percentage 10-90 with its sign. */
function prefetchRule(o: Directive): PrefetchRule | null {
  const [amount, window, percent] = o.args;
  const rule: PrefetchRule = { amount: wholeNumber(o, amount, 'AMOUNT', 0), windowS: PREFETCH_WINDOW_S, percent: PREFETCH_PERCENT };
  // Whole seconds, as the answer cache counts them: a gap of 1.5s is one of 2s.
  if (window !== undefined) rule.windowS = Math.ceil(duration(o, window, 'DURATION', 1) / 1000);
  if (percent !== undefined) {
    const m = /^(\d+)%$/.exec(percent);
    if (m === null) throw invalid(o, `PERCENTAGE is a whole number with its % sign (10%), not ${JSON.stringify(percent)}`);
    rule.percent = Number(m[1]);
    if (rule.percent < 10 || rule.percent > 90) throw invalid(o, `PERCENTAGE must be 10% to 90%, not ${percent}`);
  }
  return rule.amount === 0 ? null : rule;
}

/**
 * `serve_stale [DURATION] [immediate [RESPONSE_TTL [FAILURE_RECHECK]] | verify [VERIFY_TIMEOUT [RESPONSE_TTL
 * [FAILURE_RECHECK]]]]`: a VERIFY_TIMEOUT or FAILURE_RECHECK above 0 is not served yet.
 */
function serveStale(o: Directive, c: CacheOptions): void {
  const [stale, mode, ...rest] = o.args;
  c.staleS = Math.ceil((stale === undefined ? STALE_DEFAULT_MS : duration(o, stale, 'serve_stale', 1)) / 1000);
  if (mode === undefined) return;
  if (mode !== 'immediate' && mode !== 'verify') throw invalid(o, `the mode is immediate or verify, not ${JSON.stringify(mode)}`);
  c.staleMode = mode;
  const [verifyTimeout, responseTtl, recheck, ...more] = mode === 'verify' ? rest : [undefined, ...rest];
  if (more.length > 0) throw invalid(o, 'too many arguments');
  if (verifyTimeout !== undefined && duration(o, verifyTimeout, 'VERIFY_TIMEOUT') > 0) throw unserved(o, 'a serve_stale VERIFY_TIMEOUT above 0 (kube-dns waits for the upstreams)');
  if (responseTtl !== undefined) {
    const ms = duration(o, responseTtl, 'RESPONSE_TTL');
    if (ms % 1000 !== 0) throw invalid(o, `RESPONSE_TTL must be whole seconds, not ${responseTtl}`);
    c.staleTtl = ms / 1000;
  }
  if (recheck !== undefined && duration(o, recheck, 'FAILURE_RECHECK') > 0) throw unserved(o, 'a serve_stale FAILURE_RECHECK above 0');
}

/** dnscache's policy for `c` (null: nothing kept): TTLs capped as written, denials kept no longer than their cap. */
export function cachePolicy(c: CacheOptions | null): CachePolicy {
  if (c === null) return { size: 0, noNegcache: true, negTtl: 0, minCacheTtl: 0, maxCacheTtl: 0, maxNegTtl: 0, staleS: 0 };
  const zones = (list: string[]) => (list.length > 0 ? list : undefined);
  return {
    size: c.successCapacity + c.denialCapacity, noNegcache: c.denialTtl === 0, negTtl: c.denialTtl, minCacheTtl: Math.min(c.successMinTtl, c.successTtl), minNegTtl: Math.min(c.denialMinTtl, c.denialTtl), maxCacheTtl: c.successTtl, maxNegTtl: c.denialTtl, staleS: c.staleS, staleMode: c.staleMode, staleTtl: c.staleTtl,
    zones: c.zones ?? undefined, disableSuccess: zones(c.disable.success), disableDenial: zones(c.disable.denial), bypass: zones(c.bypass), prefetch: c.prefetch ?? undefined,
  };
}
