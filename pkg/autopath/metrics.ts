// The autopath metrics, registered on kube-dns's registry when --autopath is on.

import type { Registry } from '../metrics/registry.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import { AUTOPATH_OUTCOMES } from './autopath.ts';
import type { AutopathOutcome } from './autopath.ts';
import type { PodIndex } from './pod-index.ts';

/** Registers the metrics and returns the outcome counter the resolver calls. */
export function registerAutopathMetrics(registry: Registry, index: PodIndex): (outcome: AutopathOutcome) => void {
  const counts = new Map<AutopathOutcome, number>(AUTOPATH_OUTCOMES.map((o) => [o, 0]));
  mirroredCounter(
    registry,
    {
      name: 'kubedns_autopath_first_candidates_total',
      help: 'First candidates of a pod search walk that did not exist, by what came of them: cluster or upstream (answered with the end of the walk), nxdomain or failed (the walk ended there: answered as without autopath), upstream-silent (the upstream step had no answer within 1 s, or was skipped for 10 s after one had none: answered as without autopath), unknown-client.',
      labelNames: ['outcome'],
    },
    function* () {
      for (const [outcome, n] of counts) yield [{ outcome }, n] as const;
    },
  );
  mirroredGauge(registry, { name: 'kubedns_autopath_pods', help: 'Pod addresses autopath knows the namespace of.' }, () => [[{}, index.size]]);
  mirroredGauge(registry, { name: 'kubedns_autopath_index_bytes', help: 'Memory the pod address index holds.' }, () => [[{}, index.bytes()]]);
  return (outcome) => counts.set(outcome, counts.get(outcome)! + 1);
}
