// What the resolver needs for --autopath: whose namespace an address is, and a count of outcomes.

import type { PodIndex } from './pod-index.ts';

/**
 * What a first candidate came to: answered from the cluster, from upstream, left as today because
 * the walk ended in NXDOMAIN or a failure, because the upstream step got no answer in time (or was
 * skipped while upstreams are silent), or because the asker is not a known pod.
 */
export type AutopathOutcome = 'cluster' | 'upstream' | 'nxdomain' | 'failed' | 'upstream-silent' | 'unknown-client';
export const AUTOPATH_OUTCOMES: readonly AutopathOutcome[] = ['cluster', 'upstream', 'nxdomain', 'failed', 'upstream-silent', 'unknown-client'];

export interface Autopath {
  index: Pick<PodIndex, 'walkerNamespaceOf'>;
  counted(outcome: AutopathOutcome): void;
  silence: UpstreamSilence;
}

/**
 * Once an upstream step got no answer within its bound, the walk's upstream steps are skipped for
 * HOLD_OFF_MS: while the world's DNS is silent, every pod's missing name would otherwise wait the
 * whole bound before the client's own walk (which meets the same silence) could begin.
 */
export class UpstreamSilence {
  static readonly HOLD_OFF_MS = 10_000;
  private quietUntil = 0;

  /** Whether upstream steps are being skipped at `now` (performance.now() milliseconds). */
  holding(now: number): boolean {
    return now < this.quietUntil;
  }

  /** An upstream step's bound ran out at `now`. */
  heard(now: number): void {
    this.quietUntil = now + UpstreamSilence.HOLD_OFF_MS;
  }
}
