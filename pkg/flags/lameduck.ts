// --lameduck, shared by the pod's programs (pkg/signals runs it): how long SIGTERM leaves a program
// serving, unready, before it stops. The default covers a readiness probe every second failing twice,
// the EndpointSlice update and kube-proxy's rate-limited sync that then deletes the clients' conntrack
// entries to the pod (manifests/README.md, "Rollouts").

import type { DurationFlag } from './spec.ts';

export const LAME_DUCK_DEFAULT_MS = 5000;

/** The flag, its help saying what `serving` means for this program. */
export function lameDuckFlag(serving: string): DurationFlag {
  return {
    type: 'duration',
    default: LAME_DUCK_DEFAULT_MS,
    help: `at SIGTERM, keep ${serving} this long, so kube-proxy moves every client away first; then stop (SIGINT: at once)`,
    validate: (v) => (v >= 0 ? undefined : 'must not be negative'),
  };
}
