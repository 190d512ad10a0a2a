// `forward FROM TO... { except ZONES...; force_tcp; prefer_udp; max_concurrent N; policy random|round_robin|sequential;
// expire D; max_fails N; health_check D }`: TO an address (`ip[:port]`, `dns://ip[:port]`, `[v6]:port`)
// or a resolv.conf path (its nameservers). As CoreDNS: at most N queries in flight upstream (beyond
// them REFUSED), the first server tried by the policy (random unsaid), an upstream down after more
// than max_fails (2) unanswered tries in a row and probed every health_check (0.5 s) until it answers,
// pooled TCP connections closed after expire (10 s) idle. prefer_udp is what the forwarder always does
// (UDP first, TCP after a truncated reply). Names under an `except` zone are not forwarded: with no
// plugin after forward, CoreDNS answers them SERVFAIL, and so do ours. Other options are refused (not
// served yet).

const { isIP } = process.getBuiltinModule('node:net');
import { normalizeDomain } from '../../config/config.ts';
import { resolvConfNameservers } from '../../forward/forward.ts';
import type { ForwarderOptions, Upstream } from '../../forward/forward.ts';
import { duration, invalid, unserved, wholeNumber, written } from '../args.ts';
import type { Directive } from '../read.ts';

/** What a forward's options make of a Forwarder. */
export type ForwardSettings = Required<Pick<ForwarderOptions, 'forceTcp' | 'policy' | 'health' | 'tcpIdleMs'>> & Pick<ForwarderOptions, 'maxInFlight'>;

export interface ForwardOptions {
  /** FROM: lowercase, no trailing dot; '' for `.`. */
  from: string;
  upstreams: Upstream[];
  /** Each resolv.conf path written as a TO. */
  resolvConfs: string[];
  settings: ForwardSettings;
  /** `except`: zones (lowercase, no trailing dot) whose names are not forwarded. */
  except: string[];
}

/** CoreDNS forward's defaults. */
export const FORWARD_DEFAULTS: ForwardSettings = { forceTcp: false, maxInFlight: undefined, policy: 'random', health: { maxFails: 2, checkMs: 500 }, tcpIdleMs: 10_000 };
const POLICIES = ['random', 'round_robin', 'sequential'] as const;

/** `resolvServers`: reads a resolv.conf named as TO (default: the file's nameservers). */
export function forwardOptions(d: Directive, resolvServers: (path: string) => Upstream[] = resolvConfNameservers): ForwardOptions {
  if (d.args.length < 2) throw invalid(d, 'needs a zone and at least one upstream');
  const to = d.args.slice(1);
  const s: ForwardSettings = { ...FORWARD_DEFAULTS, health: { ...FORWARD_DEFAULTS.health } };
  const except: string[] = [];
  for (const o of d.block ?? []) {
    const one = o.args.length === 1 && o.block === null;
    if (o.name === 'except' && o.args.length > 0 && o.block === null) except.push(...o.args.map((z) => exceptZone(o, z)));
    else if (o.name === 'force_tcp' && o.args.length === 0 && o.block === null) s.forceTcp = true;
    else if (o.name === 'prefer_udp' && o.args.length === 0 && o.block === null) continue;
    else if (o.name === 'max_concurrent' && one) s.maxInFlight = wholeNumber(o, o.args[0], 'max_concurrent', 1);
    else if (o.name === 'policy' && one && (POLICIES as readonly string[]).includes(o.args[0])) s.policy = o.args[0] as ForwardSettings['policy'];
    else if (o.name === 'expire' && one) s.tcpIdleMs = duration(o, o.args[0], 'expire', 1);
    else if (o.name === 'max_fails' && one) s.health.maxFails = wholeNumber(o, o.args[0], 'max_fails', 0);
    else if (o.name === 'health_check' && one) s.health.checkMs = duration(o, o.args[0], 'health_check', 1);
    else throw unserved(o, `forward option \`${written(o)}\``);
  }
  return { from: d.args[0] === '.' ? '' : normalizeDomain(d.args[0]), upstreams: to.flatMap((t) => upstreamsOf(d, t, resolvServers)), resolvConfs: to.filter((t) => t.startsWith('/')), settings: s, except };
}

function exceptZone(o: Directive, zone: string): string {
  const z = normalizeDomain(zone);
  if (z === '') throw invalid(o, '`.` leaves nothing to forward');
  return z;
}

function upstreamsOf(d: Directive, to: string, resolvServers: (path: string) => Upstream[]): Upstream[] {
  if (to.startsWith('/')) {
    const servers = resolvServers(to);
    if (servers.length === 0) throw invalid(d, `${to} names no nameserver`);
    return servers;
  }
  const text = to.replace(/^dns:\/\//, '');
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+)(?::(\d+))?$/.exec(text) ?? [text, text, undefined];
  const host = m[1];
  const port = m[2] === undefined ? 53 : Number(m[2]);
  if (isIP(host) === 0 || !(port >= 1 && port <= 65535)) throw invalid(d, `${JSON.stringify(to)} is not ip[:port] or a resolv.conf path`);
  return [{ host, port }];
}
