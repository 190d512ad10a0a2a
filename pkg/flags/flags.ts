// Go/pflag-style command-line flags: the public surface of pkg/flags.

export { defineFlags, normalizeFlagName } from './spec.ts';
export type {
  BoolFlag,
  DurationFlag,
  FlagDef,
  FlagSpec,
  FlagType,
  FlagValues,
  IntFlag,
  StringFlag,
  StringListFlag,
  Validator,
  ValueOf,
} from './spec.ts';
export { parseFlags } from './parse.ts';
export type { ParsedFlags } from './parse.ts';
export { parseOrExit } from './exit.ts';
export { formatUsage } from './usage.ts';
export type { UsageInfo } from './usage.ts';
export { FlagError } from './errors.ts';
export type { FlagErrorCode } from './errors.ts';
export { parseDuration, formatDuration } from './duration.ts';
export { klogFlags } from './klog.ts';
export { lameDuckFlag, LAME_DUCK_DEFAULT_MS } from './lameduck.ts';
export { MAX_WORKERS, parseWorkers, workersFlag, WORKERS_AUTO } from './workers.ts';
export { FAIR_SHARE_BUSY_DEFAULT, FAIR_SHARE_FLOOR_DEFAULT, fairShareFlags, fairShareSettings } from './fairness.ts';
