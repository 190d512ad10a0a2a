// dnsmasq's cache statistics over DNS (CHAOS TXT `hits.bind.` ...), read from dnsmasq or our dnscache
// every --dnsmasq-poll-interval-ms, and turned into increments for Prometheus counters.

import { Class, Type } from '../dns/constants.ts';
import type { Message, TxtData } from '../dns/message.ts';
import type { Logger } from '../log/log.ts';
import { exchange } from './dns-client.ts';
import { SidecarError } from './errors.ts';
import type { DnsServerAddress } from './probe-spec.ts';
import { Repeat } from './repeat.ts';

/** In the order the original asks (pkg/dnsmasq/metrics.go AllMetrics). */
export const STAT_NAMES = ['hits', 'misses', 'evictions', 'insertions', 'cachesize'] as const;
export type StatName = (typeof STAT_NAMES)[number];
export type CacheStats = Record<StatName, number>;

/** The counters that only grow while the forwarder runs (cachesize is a setting). */
export const RUNNING_COUNTERS = ['hits', 'misses', 'evictions', 'insertions'] as const;

/** The original's dns.Client waits 2 s for a reply. */
export const STAT_TIMEOUT_MS = 2000;

/** The number in a statistics reply: exactly one TXT record with one string, an integer (Go's ParseInt). */
export function statValue(qname: string, reply: Message): number {
  if (reply.answers.length !== 1) throw new SidecarError('SIDECAR_BAD_STAT', `invalid number of Answer records for ${qname}: ${reply.answers.length}`);
  const rr = reply.answers[0];
  if (rr.type !== Type.TXT) throw new SidecarError('SIDECAR_BAD_STAT', `missing TXT record for ${qname}`);
  const texts = (rr.data as TxtData).texts;
  if (texts.length !== 1) throw new SidecarError('SIDECAR_BAD_STAT', `invalid number of TXT records for ${qname}: ${texts.length}`);
  const text = texts[0];
  const value = /^[+-]?[0-9]{1,19}$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(value)) throw new SidecarError('SIDECAR_BAD_STAT', `${qname}: not an integer: ${JSON.stringify(text)}`);
  return value;
}

/** One round: the five names in order; the first failure ends it (thrown). */
export async function readCacheStats(server: DnsServerAddress, timeoutMs = STAT_TIMEOUT_MS): Promise<CacheStats> {
  const stats = {} as CacheStats;
  for (const name of STAT_NAMES) {
    const qname = `${name}.bind.`;
    const { reply } = await exchange(server, { name: qname, type: Type.TXT, class: Class.CH }, timeoutMs);
    stats[name] = statValue(qname, reply);
  }
  return stats;
}

export interface StatDeltas {
  /** What to add to each counter; max_size's is cachesize above the largest seen so far. */
  add: CacheStats;
  /** A running counter went down since the last round: the forwarder started again. */
  restarted: boolean;
}

/**
 * Turns successive readings into counter increments that never go negative. When any running counter
 * is lower than last time, the forwarder restarted: each new value is then the increment (counted
 * from 0), so nothing done since the restart is lost. The original subtracted anyway and dropped the
 * negative steps, losing what the new process had counted before the first poll after its restart.
 * cachesize is a setting, not a count: its counter (max_size) follows the largest size seen.
 */
export class StatDeltaTracker {
  private last: CacheStats | null = null;
  private maxSize = 0;

  update(now: CacheStats): StatDeltas {
    const clean = {} as CacheStats;
    for (const name of STAT_NAMES) clean[name] = Math.max(0, now[name]); // as the original: negative reads as 0
    const prev = this.last;
    const restarted = prev !== null && RUNNING_COUNTERS.some((n) => clean[n] < prev[n]);
    const add = {} as CacheStats;
    for (const name of RUNNING_COUNTERS) add[name] = prev === null || restarted ? clean[name] : clean[name] - prev[name];
    add.cachesize = Math.max(0, clean.cachesize - this.maxSize);
    this.maxSize = Math.max(this.maxSize, clean.cachesize);
    this.last = clean;
    return { add, restarted };
  }
}

export interface StatsPollerOptions {
  server: DnsServerAddress;
  intervalMs: number;
  log: Logger;
  onStats: (stats: CacheStats, deltas: StatDeltas) => void;
  onError: (err: Error) => void;
  timeoutMs?: number;
}

/** Reads the statistics at once and then `intervalMs` after each round ends (the original's sleep). */
export class StatsPoller {
  private readonly o: StatsPollerOptions;
  private readonly tracker = new StatDeltaTracker();
  private readonly loop: Repeat;
  private failing: string | null = null;

  constructor(o: StatsPollerOptions) {
    this.o = o;
    this.loop = new Repeat(async () => {
      await this.pollOnce();
      return o.intervalMs;
    });
  }

  start(): void {
    this.loop.start(0);
  }

  /** No more rounds; waits for the one in flight. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One round: counters fed on success, errors counted on failure. */
  async pollOnce(): Promise<void> {
    const { log } = this.o;
    try {
      const stats = await readCacheStats(this.o.server, this.o.timeoutMs);
      const deltas = this.tracker.update(stats);
      if (deltas.restarted) log.info('the statistics went down: the forwarder restarted, counting again from 0', { ...stats });
      if (this.failing !== null) log.info('statistics readable again');
      this.failing = null;
      log.debug(3, 'statistics', { ...stats });
      this.o.onStats(stats, deltas);
    } catch (err) {
      const message = (err as Error).message;
      // Once per kind of failure: a pod without a forwarder would otherwise log every interval.
      if (this.failing !== message) log.warn('cannot read statistics from the forwarder', { err: message });
      else log.debug(2, 'cannot read statistics from the forwarder', { err: message });
      this.failing = message;
      this.o.onError(err as Error);
    }
  }
}
