// The program-facing entry: parse, or explain and exit the way Go programs do (status 2 for bad
// usage, 0 after --help); then apply the klog flags (--v, --logging-format) to pkg/log, so that every
// line from here on, the first included, is in the format asked for.

import { configureLogging, createLogger } from '../log/log.ts';
import type { LogFormat } from '../log/log.ts';
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
  const values = parsed.values as Record<string, unknown>;
  configureLogging({ verbosity: values.v as number | undefined, format: values['logging-format'] as LogFormat | undefined });
  if (parsed.ignored.length > 0) {
    createLogger('flags').info('ignoring flags kept only for compatibility with the original manifests', { flags: parsed.ignored.join(' ') });
  }
  return parsed;
}
