// --fair-share-busy and --fair-share-floor, shared by kube-dns and dnscache: from when the misses of
// a busy thread are shared between askers, and what each keeps then (pkg/dns fairness.ts).

import type { IntFlag } from './spec.ts';

export const FAIR_SHARE_BUSY_DEFAULT = 90;
export const FAIR_SHARE_FLOOR_DEFAULT = 200;

export function fairShareFlags(): { 'fair-share-busy': IntFlag; 'fair-share-floor': IntFlag } {
  return {
    'fair-share-busy': {
      type: 'int',
      default: FAIR_SHARE_BUSY_DEFAULT,
      help: "the answering thread's busy percent (over 100 ms) from which cache misses are shared fairly between askers and what exceeds an asker's share is dropped; lower keeps more headroom for everyone else under a flood, 0: never share",
      validate: (v) => (v >= 0 && v <= 99 ? undefined : 'must be 0-99'),
    },
    'fair-share-floor': {
      type: 'int',
      default: FAIR_SHARE_FLOOR_DEFAULT,
      help: 'cache misses a second every asker keeps while they are shared: above what one pod asks when it starts (a search-list walk is a few dozen); raise it where one asker speaks for many pods',
      validate: (v) => (v >= 1 ? undefined : 'must be at least 1'),
    },
  };
}

/** The flags' values as pkg/dns's FairnessOptions; null: never share. */
export function fairShareSettings(busyPercent: number, floorPerSecond: number): { busyAt: number; floorPerSecond: number } | null {
  return busyPercent === 0 ? null : { busyAt: busyPercent / 100, floorPerSecond };
}
