// "host[:port]" as the ConfigMap writes servers: "1.2.3.4", "1.2.3.4:5353", "[fd00::1]:53", "fd00::1",
// and for stub domains also "dns.corp.example" or "dns.corp.example:5353".

import { ConfigError } from './errors.ts';
import { ipFamily, isDns1123Subdomain, normalizeDomain } from './names.ts';

export interface HostPort {
  /** IP literal (IPv6 without brackets) or, for stub servers only, a DNS name as written. */
  host: string;
  port: number;
}

/**
 * Go's net.SplitHostPort, except that a string with no port (or with several colons and no
 * brackets: a bare IPv6 address) comes back whole as the host. null when the syntax is broken.
 */
function splitHostPort(s: string): { host: string; port: string | undefined } | null {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0 || s[close + 1] !== ':') return null;
    return { host: s.slice(1, close), port: s.slice(close + 2) };
  }
  const colon = s.indexOf(':');
  if (colon < 0 || colon !== s.lastIndexOf(':')) return { host: s, port: undefined };
  return { host: s.slice(0, colon), port: s.slice(colon + 1) };
}

/** A port number 1-65535, or the reason it is not one. */
function checkPort(port: string): number | string {
  if (!/^[0-9]{1,5}$/.test(port)) return 'the port is not a number';
  const n = Number(port);
  return n >= 1 && n <= 65535 ? n : 'the port must be 1-65535';
}

/**
 * Splits a server into its host (not yet checked) and port (checked, `defaultPort` when absent); a
 * string is the reason it is not acceptable, `syntax` when it does not even split.
 */
function hostAndPort(s: string, defaultPort: number, syntax: string): HostPort | string {
  const split = splitHostPort(s);
  if (split === null) return syntax;
  if (split.port === undefined) return { host: split.host, port: defaultPort };
  const port = checkPort(split.port);
  return typeof port === 'string' ? port : { host: split.host, port };
}

/** Parses a server whose host must be an IP; a string is the reason it is not acceptable. */
export function checkUpstream(s: string, defaultPort = 53): HostPort | string {
  const r = hostAndPort(s, defaultPort, 'not ip, ip:port or [ipv6]:port');
  if (typeof r === 'string') return r;
  if (ipFamily(r.host) === 0) return 'not an IP address (ip, ip:port or [ipv6]:port; names are not allowed)';
  return r;
}

/** Like checkUpstream, but the host may also be a DNS name (stub domain servers). */
export function checkStubServer(s: string, defaultPort = 53): HostPort | string {
  const r = hostAndPort(s, defaultPort, 'not host, host:port or [ipv6]:port');
  if (typeof r === 'string' || ipFamily(r.host) !== 0) return r;
  if (s.startsWith('[')) return 'brackets are for IPv6 addresses';
  if (!isDns1123Subdomain(normalizeDomain(r.host))) return 'the host is neither an IP address nor a valid DNS name';
  return r;
}

/** 'ip', 'ip:port', '[v6]:port' or 'v6' → host and port. Throws ConfigError ('CONFIG_INVALID'). */
export function parseUpstream(s: string, defaultPort = 53): HostPort {
  const r = checkUpstream(s, defaultPort);
  if (typeof r === 'string') throw new ConfigError('CONFIG_INVALID', 'upstream', s, `invalid nameserver ${JSON.stringify(s)}: ${r}`);
  return r;
}

/** As parseUpstream, but the host may be a DNS name (a stubDomains server); names come back as written. */
export function parseStubServer(s: string, defaultPort = 53): HostPort {
  const r = checkStubServer(s, defaultPort);
  if (typeof r === 'string') throw new ConfigError('CONFIG_INVALID', 'stubDomains', s, `invalid nameserver ${JSON.stringify(s)}: ${r}`);
  return r;
}
