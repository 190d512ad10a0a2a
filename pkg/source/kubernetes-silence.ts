// Notices a watch that has gone quiet: no byte (event or bookmark) for longer than the limit. A healthy
// watch cannot stay silent that long, because the API server ends it after the timeoutSeconds we ask for
// (half the limit) and sends bookmarks; a half-open connection (a NAT or load balancer dropped it) can,
// forever (coredns#3587: services that never resolved until the pod restarted).
// One timer per watch, re-armed lazily: poke() only stores a timestamp, so a busy watch costs no timer
// churn.

export class SilenceWatchdog {
  readonly limitMs: number;
  private readonly onSilent: () => void;
  private readonly now: () => number;
  private last = 0;
  private timer: NodeJS.Timeout | null = null;
  private fired = false;

  constructor(limitMs: number, onSilent: () => void, now: () => number = Date.now) {
    this.limitMs = limitMs;
    this.onSilent = onSilent;
    this.now = now;
  }

  start(): void {
    this.fired = false;
    this.last = this.now();
    this.arm(this.limitMs);
  }

  /** Activity: bytes arrived on the watch. */
  poke(): void {
    this.last = this.now();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Fires onSilent (once) if the limit has passed since the last activity; else re-arms for the rest. */
  check(): void {
    this.timer = null;
    if (this.fired) return;
    const quiet = this.now() - this.last;
    if (quiet >= this.limitMs) {
      this.fired = true;
      this.onSilent();
    } else {
      this.arm(this.limitMs - quiet);
    }
  }

  private arm(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }
}
