// The ConfigMap as the child sees it: dnsmasq `server=` lines for the servers-file, plus the command
// line (the args after `--`, our --servers-file, and --no-resolv when there are upstreams). Which
// of the two changed decides between a SIGHUP and a restart.

import { normalizeUpstream } from '../forward/forward.ts';
import { parseArgs } from '../dnscache/args.ts';
import type { HostPort } from '../config/config.ts';
import type { ChildCommand } from './exec.ts';

/** One server of the servers-file: a stub domain's (domain set) or a default upstream (domain null). */
export interface ServerEntry {
  domain: string | null;
  /** IP literal, IPv6 without brackets. */
  host: string;
  port: number;
}

/** What the child runs with: its command line and its servers-file's content. */
export interface ChildPlan {
  args: string[];
  servers: string;
}

export type PlanChange = 'start' | 'none' | 'reload' | 'restart';

/**
 * dnsmasq's address spelling: `ip#port`. IPv6 goes without brackets: dnsmasq 2.90 refuses
 * `[fd00::1]#53` ("Name or service not known") and splits `fd00::1#53` at the `#`.
 */
export function dnsmasqAddress(s: HostPort): string {
  return `${s.host}#${s.port}`;
}

/**
 * The servers-file: one `server=` line per entry, in order; empty when there are none. `noResolv`:
 * a first `no-resolv` line (for a child that reads it there: ChildCommand.serversFileNoResolv).
 */
export function serversFileText(entries: readonly ServerEntry[], noResolv = false): string {
  let text = noResolv ? 'no-resolv\n' : '';
  for (const e of entries) text += e.domain === null ? `server=${dnsmasqAddress(e)}\n` : `server=/${e.domain}/${dnsmasqAddress(e)}\n`;
  return text;
}

const NO_RESOLV = new Set(['--no-resolv', '-R']);

type ChildTraits = Pick<ChildCommand, 'serversFileNoResolv' | 'logging'>;
const UNKNOWN_CHILD: ChildTraits = { serversFileNoResolv: false, logging: [] };

/**
 * The child's command line. --no-resolv only when the ConfigMap has upstreams (otherwise the child
 * falls back to its resolv.conf, as in the original), and not twice when the args already say so;
 * never for a child that reads it from its servers-file (dnscache: a SIGHUP, not a restart).
 */
export function childArgs(rest: readonly string[], serversFile: string, hasUpstreams: boolean, child = UNKNOWN_CHILD): string[] {
  const args = [...rest, `--servers-file=${serversFile}`];
  if (hasUpstreams && !child.serversFileNoResolv && !rest.some((a) => NO_RESOLV.has(a))) args.push('--no-resolv');
  // The child's log comes to the nanny (prefixed, and its ready line seen) unless the args send it
  // elsewhere: dnsmasq's default, syslog, is nowhere in a container.
  if (logFacility(rest) === null) args.push('--log-facility=-');
  // ... and in the nanny's format, unless the args after `--` choose their own.
  for (const flag of child.logging) if (!hasFlag(rest, flag.split('=', 1)[0])) args.push(flag);
  return args;
}

/** `--name` or `--name=value` among `args`. */
function hasFlag(args: readonly string[], name: string): boolean {
  return args.some((a) => a === name || a.startsWith(`${name}=`));
}

/**
 * `args` without dnsmasq's `--add-subnet[=...]` (the manifest's, for kube-dns --autopath), and what
 * was dropped. Real dnsmasq sends the asker's address to every server, upstreams beyond the cluster
 * included, and caches no reply forwarded with it; dnscache sends it to kube-dns on loopback only.
 */
export function withoutAddSubnet(args: readonly string[]): { kept: string[]; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const a of args) (a === '--add-subnet' || a.startsWith('--add-subnet=') ? dropped : kept).push(a);
  return { kept, dropped };
}

/** The child's --log-facility (`--log-facility=v`, `--log-facility v`, `-8 v`, `-8v`); null when not given. */
export function logFacility(args: readonly string[]): string | null {
  let value: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('--log-facility=')) value = a.slice('--log-facility='.length);
    else if ((a === '--log-facility' || a === '-8') && i + 1 < args.length) value = args[++i];
    else if (a.startsWith('-8') && a.length > 2) value = a.slice(2);
  }
  return value;
}

/** What applying `next` takes: a restart when the command line changes, a SIGHUP when only the servers do. */
export function planChange(current: ChildPlan | null, next: ChildPlan): PlanChange {
  if (current === null) return 'start';
  if (current.args.length !== next.args.length || current.args.some((a, i) => a !== next.args[i])) return 'restart';
  return current.servers === next.servers ? 'none' : 'reload';
}

/** The values of every --server option in a dnsmasq command line (`--server=v`, `--server v`, `-S v`, `-Sv`). */
export function serverOptionValues(args: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('--server=')) values.push(a.slice('--server='.length));
    else if ((a === '--server' || a === '-S') && i + 1 < args.length) values.push(args[++i]);
    else if (a.startsWith('-S') && a.length > 2) values.push(a.slice(2));
  }
  return values;
}

function sameServer(a: HostPort, b: HostPort): boolean {
  try {
    const x = normalizeUpstream(a);
    const y = normalizeUpstream(b);
    return x.host === y.host && x.port === y.port;
  } catch {
    return false;
  }
}

/**
 * The domains the child's own args route to kube-dns (`--server=/<d>/<ip>#<port>` with ip#port =
 * -kubednsServer): names under them are cluster names. None → `cluster.local`, the original's guess.
 */
export function kubednsDomains(rest: readonly string[], kubedns: HostPort): string[] {
  const domains: string[] = [];
  for (const value of serverOptionValues(rest)) {
    if (!value.startsWith('/')) continue;
    let stubs;
    try {
      stubs = parseArgs([`--server=${value}`]).stubs;
    } catch {
      continue; // not ours to judge: the child reports its own bad options
    }
    for (const s of stubs) if (sameServer(s.server, kubedns) && !domains.includes(s.domain)) domains.push(s.domain);
  }
  return domains.length > 0 ? domains : ['cluster.local'];
}

/** Whether `name` (lowercase, no trailing dot) is one of `domains` or below one. */
export function underDomain(name: string, domains: readonly string[]): boolean {
  return domains.some((d) => name === d || name.endsWith(`.${d}`));
}
