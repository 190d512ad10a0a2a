// The dnsmasq-compatible command line: parse it or exit 2 naming the option, as dnsmasq does.

import { ArgsError, parseArgs } from '../../pkg/dnscache/args.ts';
import type { DnscacheConfig } from '../../pkg/dnscache/args.ts';

export function parseArgsOrExit(argv: readonly string[]): DnscacheConfig {
  try {
    return parseArgs(argv);
  } catch (err) {
    if (!(err instanceof ArgsError)) throw err;
    process.stderr.write(`dnscache: ${err.message}\n`);
    process.exit(2);
  }
}
