// dnscache's caching policy: how long an upstream reply may be kept, and the TTLs it is kept with.
// The entries themselves live in pkg/dns's AnswerCache, shared by every DnsServer, which serves
// hits itself and takes off each record's TTL the whole seconds an entry has been kept.

import { Rcode } from '../dns/constants.ts';
import { inZone } from '../dns/names.ts';
import { readTtl, writeTtl } from '../dns/walk.ts';
import type { PrefetchRule } from '../dns/prefetch.ts';
import { readReplyShape } from './records.ts';
import type { ReplyShape } from './records.ts';

export interface CachePolicy {
  /** Entries; 0 = keep nothing. */
  size: number;
  noNegcache: boolean;
  /** Seconds for a negative answer with no SOA; 0 = do not keep it. */
  negTtl: number;
  minCacheTtl: number;
  /** The least a negative answer is kept (node-cache's and a Corefile's `denial` MINTTL); absent: minCacheTtl. */
  minNegTtl?: number;
  /** 0 = no cap. */
  maxCacheTtl: number;
  /** Seconds a negative answer is kept at most (node-cache's `denial` TTL); 0 or absent = no cap. */
  maxNegTtl?: number;
  /**
   * Serve-stale (RFC 8767): seconds past its expiry an answer is still given when the upstream fails
   * (with TTL STALE_TTL); 0 or absent = never.
   */
  staleS?: number;
  /** How stale answers are given (pkg/dnscache stale.ts); absent: verify, when the upstreams fail. */
  staleMode?: 'verify' | 'immediate';
  /** The TTL of stale answers; absent: STALE_TTL. */
  staleTtl?: number;
  /** A Corefile cache's ZONES (canonical; '' is every name): only their names' replies are kept. Absent: every name's. */
  zones?: readonly string[];
  /** A Corefile cache's `disable success|denial ZONES`: names whose answers, or denials, are not kept. */
  disableSuccess?: readonly string[];
  disableDenial?: readonly string[];
  /** Zones the cache does not see (a Corefile's stub block without a cache): their replies pass untouched. */
  bypass?: readonly string[];
  /** A Corefile cache's `prefetch`: popular answers asked again ahead of their expiry (pkg/dns prefetch.ts). */
  prefetch?: PrefetchRule;
}

/** The TTL of a stale answer (RFC 8767 §4: 30 s). */
export const STALE_TTL = 30;

/** Clamps a TTL by --min-cache-ttl / --max-cache-ttl. */
export function clampTtl(ttl: number, p: Pick<CachePolicy, 'minCacheTtl' | 'maxCacheTtl'>): number {
  let t = Math.max(ttl, p.minCacheTtl);
  if (p.maxCacheTtl > 0) t = Math.min(t, p.maxCacheTtl);
  return t;
}

/**
 * How long a reply may be kept, in seconds; 0 = not at all. TC and every rcode other than NOERROR
 * and NXDOMAIN are never kept. A negative answer (NXDOMAIN, or NOERROR with no answer) lives for its
 * SOA's min(TTL, MINIMUM) (RFC 2308), or --neg-ttl without an SOA. `qname` (canonical) is the
 * question's, for a policy with zones.
 */
export function cacheTtl(reply: Uint8Array, p: CachePolicy, qname: string): number {
  const shape = readReplyShape(reply);
  return seesName(p, qname) && !disabledFor(p, qname, shape) ? lifetime(shape, p) : 0;
}

/** Whether canonical `qname` is under one of `zones` (a loop: it runs per query where a plugin's replies are capped). */
function held(zones: readonly string[], qname: string): boolean {
  for (const z of zones) if (inZone(z, qname)) return true;
  return false;
}

/**
 * Whether the cache sees replies to canonical `qname` at all: a Corefile cache's ZONES, less the zones
 * it is bypassed for (a stub block without a cache). What it does not see passes untouched, as CoreDNS's.
 */
export function seesName(p: Pick<CachePolicy, 'zones' | 'bypass'>, qname: string): boolean {
  return (p.zones === undefined || held(p.zones, qname)) && (p.bypass === undefined || !held(p.bypass, qname));
}

/** Whether `disable` keeps a reply from being stored; its TTLs are capped all the same, as CoreDNS's are. */
function disabledFor(p: CachePolicy, qname: string, shape: ReplyShape | null): boolean {
  const disabled = shape !== null && isNegative(shape) ? p.disableDenial : p.disableSuccess;
  return disabled !== undefined && held(disabled, qname);
}

const isNegative = (shape: ReplyShape) => shape.rcode === Rcode.NXDOMAIN || shape.answerCount === 0;

function lifetime(shape: ReplyShape | null, p: CachePolicy): number {
  if (shape === null || shape.truncated) return 0;
  if (shape.rcode !== Rcode.NOERROR && shape.rcode !== Rcode.NXDOMAIN) return 0;
  if (isNegative(shape)) {
    if (p.noNegcache) return 0;
    const ttl = shape.soaNegativeTtl >= 0 ? shape.soaNegativeTtl : p.negTtl;
    const kept = ttl > 0 ? clampTtl(ttl, { minCacheTtl: p.minNegTtl ?? p.minCacheTtl, maxCacheTtl: p.maxCacheTtl }) : 0;
    return p.maxNegTtl ? Math.min(kept, p.maxNegTtl) : kept;
  }
  return clampTtl(shape.minTtl, p);
}

/**
 * Readies an upstream reply for the cache: returns the seconds it may be kept (0 = not kept, and the
 * reply is left alone, but where only `disable` keeps it out), and when kept rewrites every TTL in place
 * (OPT excluded) to the clamped TTL, capped at that lifetime, so no record claims more time than its
 * entry has (a negative answer's SOA included). `qname` (canonical) is the question's.
 */
export function prepareForCache(reply: Uint8Array, p: CachePolicy, qname: string): number {
  return prepareForKeeping(reply, p, qname).ttl;
}

const NOT_KEPT = { ttl: 0, ttlOffsets: [] as readonly number[] };

/** prepareForCache, and where the reply's TTLs are, for a cache of the caller's own (one walk of the reply). */
export function prepareForKeeping(reply: Uint8Array, p: CachePolicy, qname: string): { ttl: number; ttlOffsets: readonly number[] } {
  if (p.size <= 0 || !seesName(p, qname)) return NOT_KEPT;
  const shape = readReplyShape(reply);
  const ttl = lifetime(shape, p);
  if (ttl <= 0 || shape === null) return NOT_KEPT;
  for (const off of shape.ttlOffsets) writeTtl(reply, off, Math.min(ttl, clampTtl(readTtl(reply, off), p)));
  return disabledFor(p, qname, shape) ? NOT_KEPT : { ttl, ttlOffsets: shape.ttlOffsets };
}

/**
 * name (lowercased) + type + class + DO + CD: what tells two questions apart, as the DnsServer's
 * cache key does. Askers of the same question share one upstream query.
 */
export function questionKey(qname: string, type: number, qclass: number, dnssecOk: boolean, checkingDisabled: boolean): string {
  return `${qname}|${type}|${qclass}|${dnssecOk ? 1 : 0}${checkingDisabled ? 1 : 0}`;
}
