// The dnsmasq-compatible command line: parse it or exit 2 naming the option, as dnsmasq does;
// --help (-w) and --version (-v) print and exit 0, as dnsmasq's do.

import { ArgsError, optionList, parseArgs } from '../../pkg/dnscache/args.ts';
import type { DnscacheConfig } from '../../pkg/dnscache/args.ts';
import { VERSION } from '../../pkg/version/version.ts';

function usage(): string {
  const lines = optionList().map((o) => {
    const forms = [o.short !== null ? `-${o.short}` : '', `--${o.name}${o.value ? '=<value>' : ''}`].filter(Boolean).join(', ');
    return `  ${forms}`;
  });
  return `Usage: dnscache [options]\n\nA caching DNS forwarder taking dnsmasq's options (those below; README: what each does).\n\n${lines.join('\n')}\n`;
}

export function parseArgsOrExit(argv: readonly string[]): DnscacheConfig {
  if (argv.includes('--help') || argv.includes('-w')) {
    process.stdout.write(usage());
    process.exit(0);
  }
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`dnscache version ${VERSION} (kube-dns-ts; dnsmasq's command line)\n`);
    process.exit(0);
  }
  try {
    return parseArgs(argv);
  } catch (err) {
    if (!(err instanceof ArgsError)) throw err;
    process.stderr.write(`dnscache: ${err.message}\n`);
    process.exit(2);
  }
}
