// The program-facing entry: parse, or explain and exit the way Go programs do (status 2 for bad
// usage, 0 after --help).

import { FlagError } from './errors.ts';
import { parseFlags } from './parse.ts';
import type { ParsedFlags } from './parse.ts';
import type { FlagSpec } from './spec.ts';
import { formatUsage } from './usage.ts';
import type { UsageInfo } from './usage.ts';

export function parseOrExit<S extends FlagSpec>(spec: S, argv: readonly string[], info: UsageInfo): ParsedFlags<S> {
  let parsed: ParsedFlags<S>;
  try {
    parsed = parseFlags(spec, argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`${info.program}: ${err.message}\nsee ${info.program} --help\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(formatUsage(spec, info));
    process.exit(0);
  }
  return parsed;
}
