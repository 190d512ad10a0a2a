// What the resolver needs for --autopath: whose namespace an address is, and a count of outcomes.

import type { PodIndex } from './pod-index.ts';

/**
 * What a first candidate came to: answered from the cluster, from upstream, left as today because
 * the walk ended in NXDOMAIN or a failure, or because the asker is not a known pod.
 */
export type AutopathOutcome = 'cluster' | 'upstream' | 'nxdomain' | 'failed' | 'unknown-client';
export const AUTOPATH_OUTCOMES: readonly AutopathOutcome[] = ['cluster', 'upstream', 'nxdomain', 'failed', 'unknown-client'];

export interface Autopath {
  index: Pick<PodIndex, 'namespaceOf'>;
  counted(outcome: AutopathOutcome): void;
}
