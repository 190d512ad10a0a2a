// `forward FROM TO... { force_tcp; max_concurrent N }`: TO an address (`ip[:port]`, `dns://ip[:port]`,
// `[v6]:port`) or a resolv.conf path (its nameservers); at most N queries in flight upstream (beyond
// them: REFUSED, as CoreDNS). Other options are refused (not served yet).

import { isIP } from 'node:net';
import { normalizeDomain } from '../../config/config.ts';
import { resolvConfNameservers } from '../../forward/forward.ts';
import type { Upstream } from '../../forward/forward.ts';
import { invalid, unserved, wholeNumber, written } from '../args.ts';
import type { Directive } from '../read.ts';

export interface ForwardOptions {
  /** FROM: lowercase, no trailing dot; '' for `.`. */
  from: string;
  upstreams: Upstream[];
  /** Each resolv.conf path written as a TO. */
  resolvConfs: string[];
  forceTcp: boolean;
  /** `max_concurrent`; null: no cap of its own. */
  maxConcurrent: number | null;
}

/** `resolvServers`: reads a resolv.conf named as TO (default: the file's nameservers). */
export function forwardOptions(d: Directive, resolvServers: (path: string) => Upstream[] = resolvConfNameservers): ForwardOptions {
  if (d.args.length < 2) throw invalid(d, 'needs a zone and at least one upstream');
  const to = d.args.slice(1);
  const f: ForwardOptions = { from: d.args[0] === '.' ? '' : normalizeDomain(d.args[0]), upstreams: to.flatMap((t) => upstreamsOf(d, t, resolvServers)), resolvConfs: to.filter((t) => t.startsWith('/')), forceTcp: false, maxConcurrent: null };
  for (const o of d.block ?? []) {
    if (o.name === 'force_tcp' && o.args.length === 0 && o.block === null) f.forceTcp = true;
    else if (o.name === 'max_concurrent' && o.args.length === 1 && o.block === null) f.maxConcurrent = wholeNumber(o, o.args[0], 'max_concurrent', 1);
    else throw unserved(o, `forward option \`${written(o)}\``);
  }
  return f;
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
