// One --probe: a DNS question sent on its interval, the last result kept for /healthcheck/<label>.
// As the original: the first probe after a random delay (so probes do not all fire at once), the next
// one `interval − latency` after a probe ended. Unlike the original, a reply whose rcode is not
// NOERROR is a failure too (the original looked only at the answer count).

import { Class, Rcode, rcodeName } from '../dns/constants.ts';
import type { Message } from '../dns/message.ts';
import type { Logger } from '../log/log.ts';
import { exchange } from './dns-client.ts';
import type { ProbeSpec } from './probe-spec.ts';
import { Repeat } from './repeat.ts';

export interface ProbeResult {
  ok: boolean;
  /** The round trip (TCP retry included); reported as 0 on failure, as the original's JSON does. */
  latencyMs: number;
  /** '' when ok. */
  err: string;
  /** The reply's rcode, -1 when there was no reply. */
  rcode: number;
}

/** /healthcheck/<label>'s body, field names and meaning as the original's. */
export interface ProbeHealth {
  IsOk: boolean;
  LatencySeconds: number;
  Err: string;
}

/** A probe's DNS timeout: one interval, at most 5 s, so a probe never overlaps the next one. */
export const MAX_PROBE_TIMEOUT_MS = 5000;
/** The random first delay stays under this even for long intervals: a fresh pod reports soon. */
export const MAX_FIRST_DELAY_MS = 5000;

export const WAITING = 'waiting for first probe';

/** Why `reply` fails the probe, or null when it passes. */
export function judgeReply(reply: Message, name: string): string | null {
  if (reply.rcode !== Rcode.NOERROR) return `${rcodeName(reply.rcode)} for domain ${JSON.stringify(name)}`;
  if (reply.answers.length === 0) return `no RRs for domain ${JSON.stringify(name)}`;
  return null;
}

export interface ProbeOptions {
  log: Logger;
  /** Called after every probe (metrics). */
  onResult?: (result: ProbeResult) => void;
  /** The delay before the first probe; default random below min(interval, MAX_FIRST_DELAY_MS). */
  firstDelayMs?: number;
}

export class Probe {
  readonly spec: ProbeSpec;
  private readonly log: Logger;
  private readonly onResult: (result: ProbeResult) => void;
  private readonly firstDelayMs: number;
  private last: ProbeResult | null = null;
  private readonly loop: Repeat;

  constructor(spec: ProbeSpec, opts: ProbeOptions) {
    this.spec = spec;
    this.log = opts.log.child(`probe/${spec.label}`);
    this.onResult = opts.onResult ?? (() => {});
    this.firstDelayMs = opts.firstDelayMs ?? Math.random() * Math.min(spec.intervalMs, MAX_FIRST_DELAY_MS);
    this.loop = new Repeat(async () => Math.max(0, spec.intervalMs - (await this.probeOnce()).latencyMs));
  }

  get timeoutMs(): number {
    return Math.min(this.spec.intervalMs, MAX_PROBE_TIMEOUT_MS);
  }

  /** The last result, null before the first probe has ended. */
  get lastResult(): ProbeResult | null {
    return this.last;
  }

  health(): ProbeHealth {
    if (this.last === null) return { IsOk: false, LatencySeconds: 0, Err: WAITING };
    // Whole nanoseconds, as Go's Duration.Seconds() (no float noise from the millisecond clock).
    const seconds = this.last.ok ? Math.round(this.last.latencyMs * 1e6) / 1e9 : 0;
    return { IsOk: this.last.ok, LatencySeconds: seconds, Err: this.last.err };
  }

  start(): void {
    this.loop.start(this.firstDelayMs);
  }

  /** No more probes; waits for the one in flight. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One probe, recorded as the last result. */
  async probeOnce(): Promise<ProbeResult> {
    const { server, name, type } = this.spec;
    const started = performance.now();
    let result: ProbeResult;
    try {
      const { reply } = await exchange(server, { name, type, class: Class.IN }, this.timeoutMs);
      const latencyMs = performance.now() - started;
      const failure = judgeReply(reply, name);
      result = { ok: failure === null, latencyMs, err: failure ?? '', rcode: reply.rcode };
    } catch (err) {
      result = { ok: false, latencyMs: performance.now() - started, err: (err as Error).message, rcode: -1 };
    }
    this.record(result);
    return result;
  }

  private record(result: ProbeResult): void {
    const before = this.last;
    this.last = result;
    // State changes at info/warn; every probe at --v=4 (the original logs failures at V(3)).
    if (!result.ok && (before === null || before.ok || before.err !== result.err)) {
      this.log.warn('probe failing', { err: result.err });
    } else if (result.ok && before !== null && !before.ok) {
      this.log.info('probe ok again', { latencyMs: round(result.latencyMs) });
    }
    this.log.debug(4, 'probe done', { ok: result.ok, latencyMs: round(result.latencyMs), err: result.err || undefined });
    this.onResult(result);
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
