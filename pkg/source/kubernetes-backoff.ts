// Exponential backoff with jitter for reconnecting to the API server: 0.5 s, 1 s, 2 s ... capped at
// 5 s, each delay stretched by up to 20% at random so many kube-dns replicas do not reconnect in step
// after an API server restart. The cap bounds how long kube-dns serves a stale state after the API server
// is reachable again (at 30 s, a partition of a few minutes healed and kube-dns tried again up to 36 s
// later, where CoreDNS's client retries a reset request every second); a try is one TLS handshake, and
// the API server's priority and fairness answers 429 when that is too much.

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Up to this fraction is added at random to each delay. Default 0.2. */
  jitter?: number;
  /** [0, 1) source; Math.random by default. */
  random?: () => number;
}

export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private failures = 0;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 500;
    this.maxMs = opts.maxMs ?? 5_000;
    this.jitter = opts.jitter ?? 0.2;
    this.random = opts.random ?? Math.random;
  }

  /** Failures since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  /** The delay before the next attempt; each call doubles the base until maxMs. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(base * (1 + this.jitter * this.random()));
  }

  /** A healthy connection: the next failure starts from initialMs again. */
  reset(): void {
    this.failures = 0;
  }
}
