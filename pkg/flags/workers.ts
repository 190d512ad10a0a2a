// --workers, shared by kube-dns and dnscache: how many threads answer DNS. `auto` (the default):
// what the process may use, bounded by its memory limit (pkg/dnsthreads/auto.ts); a number: that many.

import type { StringFlag } from './spec.ts';

export const WORKERS_AUTO = 'auto';
/** More threads than any node has cores for is a typo. */
export const MAX_WORKERS = 256;

/** `auto` → 0; a count 1-MAX_WORKERS → itself; anything else → null. */
export function parseWorkers(text: string): number | null {
  if (text === WORKERS_AUTO) return 0;
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= MAX_WORKERS ? n : null;
}

export function workersFlag(help: string): StringFlag {
  return {
    type: 'string',
    default: WORKERS_AUTO,
    help: `${help}; auto: the CPUs this process may use (affinity, cgroup quota), as many as its memory limit allows, at most 8`,
    validate: (v) => (parseWorkers(v) === null ? `must be auto or 1-${MAX_WORKERS}` : undefined),
  };
}
