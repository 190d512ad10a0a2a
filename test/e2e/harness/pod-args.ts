// A manifest container's args read by the program's own flag definitions (cmd/*/flags.ts and dnscache's
// dnsmasq-style parser): what each program will do with exactly those args, defaults included.

import { parseFlags } from '../../../pkg/flags/flags.ts';
import type { FlagValues } from '../../../pkg/flags/flags.ts';
import { parseArgs } from '../../../pkg/dnscache/args.ts';
import type { DnscacheConfig } from '../../../pkg/dnscache/args.ts';
import { parseProbeSpecs } from '../../../pkg/sidecar/probe-spec.ts';
import type { ProbeSpec } from '../../../pkg/sidecar/probe-spec.ts';
import { kubeDnsFlags } from '../../../cmd/kube-dns/flags.ts';
import { nannyFlags } from '../../../cmd/dnsmasq-nanny/flags.ts';
import { sidecarFlags } from '../../../cmd/sidecar/flags.ts';

export function kubednsFlagsOf(args: readonly string[]): FlagValues<typeof kubeDnsFlags> {
  const parsed = parseFlags(kubeDnsFlags, args);
  if (parsed.rest.length > 0) throw new Error(`kube-dns takes no arguments after --: ${parsed.rest.join(' ')}`);
  return parsed.values;
}

/** The nanny's flags, and its child's command line (after `--`) as dnscache reads it. */
export function dnsmasqFlagsOf(args: readonly string[]): { nanny: FlagValues<typeof nannyFlags>; dnscache: DnscacheConfig } {
  const parsed = parseFlags(nannyFlags, args);
  return { nanny: parsed.values, dnscache: parseArgs(parsed.rest) };
}

export function sidecarFlagsOf(args: readonly string[]): FlagValues<typeof sidecarFlags> & { probes: ProbeSpec[] } {
  const parsed = parseFlags(sidecarFlags, args);
  const probes = parseProbeSpecs(parsed.values.probe);
  if (typeof probes === 'string') throw new Error(probes);
  return { ...parsed.values, probes };
}
