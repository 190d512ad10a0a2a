// A parsed Corefile → what node-cache serves: per server block its zone, where it listens, its cache
// policy and its upstreams; one metrics and one health address for the process. Only the subset the
// upstream template uses (and CoreDNS's serve_stale) is served; any other plugin, option or argument
// is a CorefileError naming its line, so nothing an operator wrote is silently ignored.

import { isIP } from 'node:net';
import { normalizeDomain } from '../config/config.ts';
import { resolvConfNameservers } from '../forward/forward.ts';
import type { Upstream } from '../forward/forward.ts';
import { parseDuration } from '../flags/flags.ts';
import type { Directive, ServerBlock } from './corefile.ts';
import { CorefileError } from './errors.ts';

/** CoreDNS's cache defaults: 9984 entries each for answers and denials, TTLs capped at an hour (denials 30 min). */
export const CACHE_CAPACITY = 9984;
const MAX_TTL = 3600;
const MAX_DENIAL_TTL = 1800;
/** CoreDNS's serve_stale default: an expired answer is served for up to an hour while the upstream fails. */
const STALE_DEFAULT_S = 3600;

export interface CachePlan {
  successCapacity: number;
  /** Seconds an answer is kept at most. */
  successTtl: number;
  denialCapacity: number;
  /** Seconds an NXDOMAIN or NODATA is kept at most. */
  denialTtl: number;
  /** serve_stale: seconds past expiry an answer may still be served while the upstream fails; 0 = off. */
  staleS: number;
}

export interface ZonePlan {
  /** Lowercase, no trailing dot; '' is the root. */
  zone: string;
  port: number;
  /** `bind`: addresses; empty = every address. */
  bind: string[];
  /** null: no `cache` (every query forwarded). */
  cache: CachePlan | null;
  upstreams: Upstream[];
  /** `force_tcp`. */
  forceTcp: boolean;
  logErrors: boolean;
  logQueries: boolean;
  /** `loop`: probe the upstreams for a forwarding loop back to us. */
  loopDetect: boolean;
  line: number;
}

export interface NodeCachePlan {
  zones: ZonePlan[];
  /** `prometheus`: host:port, or null. */
  metrics: string | null;
  /** `health`: host:port, or null; its `lameduck` in ms. */
  health: string | null;
  healthLameDuckMs: number;
}

type ZoneDirective = (d: Directive, zone: ZonePlan, plan: NodeCachePlan, ctx: PlanContext) => void;

export interface PlanContext {
  /** -dns.port: the port of a key that names none. */
  defaultPort: number;
  /** Reads a resolv.conf named by `forward . /etc/resolv.conf`. */
  resolvServers?: (path: string) => Upstream[];
}

const invalid = (d: Directive, message: string) => new CorefileError('COREFILE_INVALID', d.line, `${d.name}: ${message}`);
const unsupported = (d: Directive, what: string) => new CorefileError('COREFILE_UNSUPPORTED', d.line, `${what} is not served by node-cache (it serves: ${Object.keys(DIRECTIVES).join(', ')})`);

function noArgs(d: Directive): void {
  if (d.args.length > 0 || d.block !== null) throw invalid(d, 'takes no arguments');
}

function int(d: Directive, text: string, what: string, min: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min) throw invalid(d, `${what} must be a whole number of at least ${min}, not ${JSON.stringify(text)}`);
  return n;
}

/** `cache [TTL]` and its block: `success CAP [TTL]`, `denial CAP [TTL]`, `serve_stale [DURATION]`. */
const cache: ZoneDirective = (d, zone) => {
  if (d.args.length > 1) throw invalid(d, 'takes at most a TTL here (zones of its own are not served)');
  const ttl = d.args.length === 1 ? int(d, d.args[0], 'the TTL', 0) : null;
  const c: CachePlan = { successCapacity: CACHE_CAPACITY, successTtl: ttl ?? MAX_TTL, denialCapacity: CACHE_CAPACITY, denialTtl: ttl ?? MAX_DENIAL_TTL, staleS: 0 };
  for (const o of d.block ?? []) {
    if ((o.name === 'success' || o.name === 'denial') && o.args.length >= 1 && o.args.length <= 2 && o.block === null) {
      const capacity = int(o, o.args[0], 'the capacity', 1);
      const max = o.args.length === 2 ? int(o, o.args[1], 'the TTL', 0) : null;
      if (o.name === 'success') [c.successCapacity, c.successTtl] = [capacity, max ?? c.successTtl];
      else [c.denialCapacity, c.denialTtl] = [capacity, max ?? c.denialTtl];
    } else if (o.name === 'serve_stale' && o.args.length <= 1 && o.block === null) {
      const ms = o.args.length === 1 ? parseDuration(o.args[0]) : STALE_DEFAULT_S * 1000;
      if (ms === undefined || ms <= 0) throw invalid(o, `a positive duration, not ${JSON.stringify(o.args[0])}`);
      c.staleS = Math.ceil(ms / 1000);
    } else {
      throw unsupported(o, `cache option \`${[o.name, ...o.args].join(' ')}\``);
    }
  }
  zone.cache = c;
};

/**
 * `forward FROM TO... { force_tcp }`: FROM `.` or the block's own zone (both mean every name the block
 * gets); TO addresses or a resolv.conf.
 */
const forward: ZoneDirective = (d, zone, _plan, ctx) => {
  if (d.args.length < 2) throw invalid(d, 'needs a zone and at least one upstream');
  const from = d.args[0] === '.' ? '' : normalizeDomain(d.args[0]);
  if (from !== '' && from !== zone.zone) throw unsupported(d, `forward for ${d.args[0]} inside the block of ${zone.zone || '.'}`);
  zone.upstreams = d.args.slice(1).flatMap((to) => upstreamsOf(d, to, ctx));
  for (const o of d.block ?? []) {
    if (o.name === 'force_tcp' && o.args.length === 0 && o.block === null) zone.forceTcp = true;
    else throw unsupported(o, `forward option \`${[o.name, ...o.args].join(' ')}\``);
  }
};

function upstreamsOf(d: Directive, to: string, ctx: PlanContext): Upstream[] {
  if (to.startsWith('/')) {
    const servers = (ctx.resolvServers ?? resolvConfNameservers)(to);
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

const bind: ZoneDirective = (d, zone) => {
  if (d.args.length === 0 || d.block !== null) throw invalid(d, 'needs one or more addresses');
  for (const a of d.args) if (isIP(a) === 0) throw invalid(d, `${JSON.stringify(a)} is not an IP address (interface names are not served)`);
  zone.bind.push(...d.args);
};

/** One address for the process, as CoreDNS allows one endpoint per address. */
function processWide(d: Directive, current: string | null, fallback: string): string {
  if (d.args.length > 1) throw invalid(d, 'takes at most one address');
  const address = d.args[0] ?? fallback;
  if (!/^(\[[^\]]*\]|[^:]*):\d+$/.test(address)) throw invalid(d, `${JSON.stringify(address)} is not host:port`);
  if (current !== null && current !== address) throw unsupported(d, `a second ${d.name} address (${address}; ${current} is already served)`);
  return address;
}

const DIRECTIVES: Record<string, ZoneDirective> = {
  errors: (d, zone) => {
    noArgs(d);
    zone.logErrors = true;
  },
  log: (d, zone) => {
    noArgs(d);
    zone.logQueries = true;
  },
  // We render and apply the Corefile ourselves whenever the ConfigMap changes (the original wrote it
  // for CoreDNS's reload to find): accepted, nothing to do.
  reload: (d) => {
    if (d.args.length > 2 || d.block !== null) throw invalid(d, 'takes at most an interval and a jitter');
  },
  loop: (d, zone) => {
    noArgs(d);
    zone.loopDetect = true;
  },
  bind,
  cache,
  forward,
  prometheus: (d, _zone, plan) => {
    if (d.block !== null) throw unsupported(d, 'a prometheus block');
    plan.metrics = processWide(d, plan.metrics, 'localhost:9153');
  },
  health: (d, _zone, plan) => {
    plan.health = processWide(d, plan.health, ':8080');
    for (const o of d.block ?? []) {
      const ms = o.name === 'lameduck' && o.args.length === 1 && o.block === null ? parseDuration(o.args[0]) : undefined;
      if (ms === undefined || ms < 0) throw unsupported(o, `health option \`${[o.name, ...o.args].join(' ')}\``);
      plan.healthLameDuckMs = ms;
    }
  },
};

/** `zone[:port]`, `dns://zone[:port]`. */
function zoneKey(key: string, line: number, defaultPort: number): { zone: string; port: number } {
  const m = /^(?:dns:\/\/)?([^:]*)(?::(\d+))?$/.exec(key);
  if (m === null || m[1] === '') throw new CorefileError('COREFILE_UNSUPPORTED', line, `server block key ${JSON.stringify(key)}: only dns:// zones with a port are served`);
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (!(port >= 0 && port <= 65535)) throw new CorefileError('COREFILE_INVALID', line, `server block key ${JSON.stringify(key)}: port must be 0-65535`);
  return { zone: m[1] === '.' ? '' : normalizeDomain(m[1]), port };
}

/** What a Corefile asks of node-cache; throws CorefileError at the first line it cannot serve. */
export function planCorefile(blocks: readonly ServerBlock[], ctx: PlanContext): NodeCachePlan {
  const plan: NodeCachePlan = { zones: [], metrics: null, health: null, healthLameDuckMs: 0 };
  const seen = new Set<string>();
  for (const block of blocks) {
    for (const key of block.keys) {
      const { zone: name, port } = zoneKey(key, block.line, ctx.defaultPort);
      if (seen.has(`${name}:${port}`)) throw new CorefileError('COREFILE_INVALID', block.line, `zone ${name || '.'} on port ${port} has a server block already`);
      seen.add(`${name}:${port}`);
      const zone: ZonePlan = { zone: name, port, bind: [], cache: null, upstreams: [], forceTcp: false, logErrors: false, logQueries: false, loopDetect: false, line: block.line };
      for (const d of block.directives) {
        const apply = Object.hasOwn(DIRECTIVES, d.name) ? DIRECTIVES[d.name] : null;
        if (apply === null) throw unsupported(d, `the plugin \`${d.name}\``);
        apply(d, zone, plan, ctx);
      }
      if (zone.upstreams.length === 0) throw new CorefileError('COREFILE_INVALID', block.line, `the block of ${name || '.'} has no forward: node-cache serves no zone of its own`);
      plan.zones.push(zone);
    }
  }
  if (plan.zones.length === 0) throw new CorefileError('COREFILE_INVALID', 1, 'no server block');
  return plan;
}
