// The dnsmasq command line, the subset dnscache understands: `--opt=value`, `--opt value`, short
// options (`-k`, `-p 53`, `-p53`). Anything else is an ArgsError naming the option, so a caller
// (dnsmasq-nanny, a manifest) learns at once that dnscache cannot honour it.

import { ipVersion } from '../dns/ip.ts';
import { parseByteSize } from '../flags/bytes.ts';
import { MAX_WORKERS, parseWorkers } from '../flags/workers.ts';
import { FAIR_SHARE_BUSY_DEFAULT, FAIR_SHARE_FLOOR_DEFAULT } from '../flags/fairness.ts';
import type { Upstream } from '../forward/forward.ts';
import { LOG_FORMATS } from '../log/log.ts';
import type { LogFormat } from '../log/log.ts';

export interface StubServer {
  /** Lowercased, no trailing dot. */
  domain: string;
  server: Upstream;
}

export interface DnscacheConfig {
  keepInForeground: boolean;
  port: number;
  /** Empty: every IPv4 address (0.0.0.0). */
  listenAddresses: string[];
  bindInterfaces: boolean;
  /** Entries; 0 disables the cache. dnsmasq's default is 150. */
  cacheSize: number;
  /** --cache-bytes (ours): what the cached answers may take, whatever their count; 0 disables the cache. */
  cacheBytes: number;
  /**
   * --reuse-port (ours): bind with SO_REUSEPORT, so a successor can serve beside this process before
   * it stops (the nanny's restarts). Off: a second process on the port fails, as dnsmasq does.
   */
  reusePort: boolean;
  /**
   * --workers (ours): threads answering queries, each with its own sockets on the port (SO_REUSEPORT),
   * its own answer cache (--cache-size entries, --cache-bytes) and forwarder. 1: this thread alone;
   * 0 (`auto`, the default): what the process may use (pkg/dnsthreads/auto.ts).
   */
  workers: number;
  /** --fair-share-busy and --fair-share-floor (ours, as kube-dns's): misses shared between askers while the thread is busy (pkg/fairshare); busy 0: never. */
  fairShareBusy: number;
  fairShareFloor: number;
  /**
   * --add-subnet=32[,128]: pass each asker's whole address as an EDNS Client Subnet to servers on
   * loopback (kube-dns in the pod, for --autopath), and keep replies scoped to it for that asker only.
   */
  addSubnet: boolean;
  /** Rotate A/AAAA answers per reply (ours; on by default, --no-round-robin turns it off). */
  roundRobin: boolean;
  noNegcache: boolean;
  /** Seconds a negative answer without an SOA is kept; 0 = not kept. */
  negTtl: number;
  minCacheTtl: number;
  /** 0 = no cap. */
  maxCacheTtl: number;
  /**
   * --use-stale-cache[=max_expired]: an answer up to this many seconds past its expiry is given (TTL
   * 30, RFC 8767) when forwarding fails; 0 = never. dnsmasq gives it first and refreshes after.
   */
  staleS: number;
  noResolv: boolean;
  resolvFile: string;
  /** --server=ip#port, in order. */
  servers: Upstream[];
  /** --server=/domain/ip#port, in order (several per domain fail over). */
  stubs: StubServer[];
  /**
   * Every --server address in the order given, default and stub domains interleaved: the order
   * servers.bind lists them in, as dnsmasq does. parseArgs always fills it; when absent, the stubs'
   * addresses are taken to come first.
   */
  serverOrder?: Upstream[];
  dnsForwardMax: number;
  /** More --server lines, re-read on SIGHUP; '' = none. */
  serversFile: string;
  /** Servers are always tried in the order given; accepted for dnsmasq's sake. */
  strictOrder: boolean;
  logQueries: boolean;
  /** Probe the default servers for forwarding loops at start and on SIGHUP (pkg/dnscache/loop.ts). */
  dnsLoopDetect: boolean;
  logFacility: string;
  /** Not dnsmasq's: the Kubernetes components' --logging-format (text = klog, json), as our other programs. */
  loggingFormat: LogFormat;
  /** Not dnsmasq's: klog's --v (V(n) lines, e.g. forwarding failures at 1); -v stays dnsmasq's --version. */
  verbosity: number;
  pidFile: string;
}

export class ArgsError extends Error {
  readonly code = 'DNSCACHE_BAD_OPTION';
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

/** flag: no value; value: `--x=v` or `--x v`; optional: `--x` or `--x=v` (dnsmasq's `--x[=v]`). */
type Kind = 'flag' | 'value' | 'optional';
interface OptionSpec {
  kind: Kind;
  apply(c: DnscacheConfig, value: string, name: string): void;
}

/** --cache-bytes unless given: a ceiling well above what --cache-size entries of ordinary answers take. */
export const DEFAULT_CACHE_BYTES = 16 * 1024 * 1024;

/** --use-stale-cache without a value: a day (dnsmasq: no limit; ours keeps what the cache may hold). */
export const STALE_DEFAULT_S = 86_400;

/** dnsmasq caps --min-cache-ttl at one hour (TTL_FLOOR_LIMIT). */
const MIN_CACHE_TTL_LIMIT = 3600;

function workers(name: string, value: string): number {
  const n = parseWorkers(value);
  if (n === null) throw new ArgsError(name, `bad value for --${name}: ${JSON.stringify(value)} (auto or 1-${MAX_WORKERS})`);
  return n;
}

function int(name: string, value: string, max = 0x7fffffff): number {
  if (!/^\d+$/.test(value) || Number(value) > max) throw new ArgsError(name, `bad value for --${name}: ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * dnsmasq's --add-subnet, in the one form autopath needs: the asker's whole address (32, or 32,128).
 * 0 (dnsmasq's "mark, send nothing") turns it off; shorter prefixes and fixed addresses are refused:
 * they would name no single pod.
 */
function addSubnet(name: string, value: string): boolean {
  if (value === '0' || value === '0,0') return false;
  if (value === '32' || value === '32,128') return true;
  throw new ArgsError(name, `bad value for --${name}: ${JSON.stringify(value)} (dnscache passes the asker's whole address or nothing: 32,128 or 0)`);
}

function logFormat(name: string, value: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new ArgsError(name, `bad value for --${name}: ${JSON.stringify(value)} (${LOG_FORMATS.join(' or ')})`);
  return value as LogFormat;
}

function byteSize(name: string, value: string): number {
  const n = parseByteSize(value);
  if (n === undefined) throw new ArgsError(name, `bad value for --${name}: ${JSON.stringify(value)} (bytes, or a number with Ki, Mi, Gi, k, M or G)`);
  return n;
}

/** `1.2.3.4`, `1.2.3.4#53`, `::1#53`, `[::1]#53`. */
export function parseServerAddress(name: string, text: string): Upstream {
  const hash = text.lastIndexOf('#');
  let host = hash < 0 ? text : text.slice(0, hash);
  const port = hash < 0 ? 53 : int(name, text.slice(hash + 1), 65535);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  // The tree's one IP parser: what passes here, the forwarder accepts too.
  if (ipVersion(host) === 0 || port === 0) throw new ArgsError(name, `bad server address for --${name}: ${JSON.stringify(text)}`);
  return { host, port };
}

function server(c: DnscacheConfig, value: string, name: string): void {
  if (!value.startsWith('/')) {
    const upstream = parseServerAddress(name, value);
    c.servers.push(upstream);
    c.serverOrder?.push(upstream);
    return;
  }
  const parts = value.split('/');
  // ['', d1, d2, ..., addr]
  const addr = parts[parts.length - 1];
  const domains = parts.slice(1, -1);
  if (domains.length === 0 || addr === '' || domains.some((d) => d === '')) {
    // `/domain/` (answer locally only) and `/#/` are dnsmasq features dnscache does not have.
    throw new ArgsError(name, `unsupported --${name} value: ${JSON.stringify(value)}`);
  }
  const upstream = parseServerAddress(name, addr);
  for (const d of domains) c.stubs.push({ domain: d.toLowerCase().replace(/\.$/, ''), server: upstream });
  c.serverOrder?.push(upstream);
}

const options: Record<string, OptionSpec> = {
  'keep-in-foreground': { kind: 'flag', apply: (c) => (c.keepInForeground = true) },
  port: { kind: 'value', apply: (c, v, n) => (c.port = int(n, v, 65535)) },
  'listen-address': { kind: 'value', apply: (c, v) => c.listenAddresses.push(...v.split(',')) },
  'bind-interfaces': { kind: 'flag', apply: (c) => (c.bindInterfaces = true) },
  'cache-size': { kind: 'value', apply: (c, v, n) => (c.cacheSize = int(n, v)) },
  'cache-bytes': { kind: 'value', apply: (c, v, n) => (c.cacheBytes = byteSize(n, v)) },
  'add-subnet': { kind: 'value', apply: (c, v, n) => (c.addSubnet = addSubnet(n, v)) },
  'reuse-port': { kind: 'flag', apply: (c) => (c.reusePort = true) },
  workers: { kind: 'value', apply: (c, v, n) => (c.workers = workers(n, v)) },
  'fair-share-busy': { kind: 'value', apply: (c, v, n) => (c.fairShareBusy = int(n, v, 99)) },
  'fair-share-floor': { kind: 'value', apply: (c, v, n) => (c.fairShareFloor = Math.max(1, int(n, v))) },
  'no-round-robin': { kind: 'flag', apply: (c) => (c.roundRobin = false) },
  'use-stale-cache': { kind: 'optional', apply: (c, v, n) => (c.staleS = v === '' ? STALE_DEFAULT_S : Math.max(1, int(n, v))) },
  'no-negcache': { kind: 'flag', apply: (c) => (c.noNegcache = true) },
  'neg-ttl': { kind: 'value', apply: (c, v, n) => (c.negTtl = int(n, v)) },
  'min-cache-ttl': { kind: 'value', apply: (c, v, n) => (c.minCacheTtl = Math.min(int(n, v), MIN_CACHE_TTL_LIMIT)) },
  'max-cache-ttl': { kind: 'value', apply: (c, v, n) => (c.maxCacheTtl = int(n, v)) },
  'no-resolv': { kind: 'flag', apply: (c) => (c.noResolv = true) },
  'resolv-file': { kind: 'value', apply: (c, v) => (c.resolvFile = v) },
  server: { kind: 'value', apply: server },
  'dns-forward-max': { kind: 'value', apply: (c, v, n) => (c.dnsForwardMax = Math.max(1, int(n, v))) },
  'servers-file': { kind: 'value', apply: (c, v) => (c.serversFile = v) },
  'strict-order': { kind: 'flag', apply: (c) => (c.strictOrder = true) },
  'log-queries': { kind: 'flag', apply: (c) => (c.logQueries = true) },
  'dns-loop-detect': { kind: 'flag', apply: (c) => (c.dnsLoopDetect = true) },
  'log-facility': { kind: 'value', apply: (c, v) => (c.logFacility = v) },
  'pid-file': { kind: 'value', apply: (c, v) => (c.pidFile = v) },
  'logging-format': { kind: 'value', apply: (c, v, n) => (c.loggingFormat = logFormat(n, v)) },
  v: { kind: 'value', apply: (c, v, n) => (c.verbosity = int(n, v)) },
};

/** dnsmasq's short spellings of the options above. */
const shortNames: Record<string, string> = {
  k: 'keep-in-foreground',
  p: 'port',
  a: 'listen-address',
  z: 'bind-interfaces',
  c: 'cache-size',
  N: 'no-negcache',
  R: 'no-resolv',
  r: 'resolv-file',
  S: 'server',
  '0': 'dns-forward-max',
  '8': 'log-facility',
  x: 'pid-file',
  o: 'strict-order',
  q: 'log-queries',
};

export function defaultConfig(): DnscacheConfig {
  return {
    keepInForeground: false,
    port: 53,
    listenAddresses: [],
    bindInterfaces: false,
    cacheSize: 150,
    cacheBytes: DEFAULT_CACHE_BYTES,
    reusePort: false,
    workers: 0,
    fairShareBusy: FAIR_SHARE_BUSY_DEFAULT,
    fairShareFloor: FAIR_SHARE_FLOOR_DEFAULT,
    addSubnet: false,
    roundRobin: true,
    noNegcache: false,
    negTtl: 0,
    minCacheTtl: 0,
    maxCacheTtl: 0,
    staleS: 0,
    noResolv: false,
    resolvFile: '/etc/resolv.conf',
    servers: [],
    stubs: [],
    serverOrder: [],
    // Well above dnsmasq's 150: the forwarder keeps its own socket pool, and in-flight sharing helps.
    dnsForwardMax: 10_000,
    serversFile: '',
    strictOrder: false,
    logQueries: false,
    dnsLoopDetect: false,
    logFacility: '-',
    loggingFormat: 'text',
    verbosity: 0,
    pidFile: '',
  };
}

/** Throws ArgsError for an unknown option, a missing or bad value, or a stray argument. */
/** Every option dnscache takes, for --help: its long name, its one-letter form, whether it takes a value. */
export function optionList(): { name: string; short: string | null; value: boolean }[] {
  const shortOf = new Map(Object.entries(shortNames).map(([s, long]) => [long, s]));
  return Object.entries(options).map(([name, spec]) => ({ name, short: shortOf.get(name) ?? null, value: spec.kind === 'value' }));
}

export function parseArgs(argv: readonly string[]): DnscacheConfig {
  const c = defaultConfig();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    let name: string;
    let value: string | undefined;
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      value = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith('-') && arg.length > 1) {
      const long = shortNames[arg[1]];
      if (long === undefined) throw new ArgsError(arg, `unknown option ${arg}`);
      name = long;
      value = arg.length > 2 ? arg.slice(2) : undefined;
    } else {
      throw new ArgsError(arg, `unexpected argument ${JSON.stringify(arg)}`);
    }
    const spec = options[name];
    if (spec === undefined) throw new ArgsError(name, `unknown option --${name}`);
    if (spec.kind === 'optional') {
      spec.apply(c, value ?? '', name);
      continue;
    }
    if (spec.kind === 'flag') {
      if (value !== undefined) throw new ArgsError(name, `--${name} takes no value`);
      spec.apply(c, '', name);
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new ArgsError(name, `--${name} needs a value`);
      value = argv[++i];
    }
    spec.apply(c, value, name);
  }
  return c;
}

/**
 * A --servers-file: one `server=...` per line (dnsmasq allows only those there); blank lines and `#`
 * comments skipped. Bad lines are returned as errors, the good ones are still used.
 */
export function parseServersFile(text: string): { servers: Upstream[]; stubs: StubServer[]; order: Upstream[]; noResolv: boolean; errors: string[] } {
  const c = defaultConfig();
  const errors: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    // Ours (dnsmasq takes server= lines only): the nanny's way to turn the resolv file off with a SIGHUP.
    if (line === 'no-resolv') {
      c.noResolv = true;
      continue;
    }
    const m = /^server\s*=\s*(\S+)$/.exec(line);
    try {
      if (m === null) throw new ArgsError('servers-file', `not a server= line: ${JSON.stringify(line)}`);
      server(c, m[1], 'server');
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return { servers: c.servers, stubs: c.stubs, order: c.serverOrder ?? [], noResolv: c.noResolv, errors };
}
