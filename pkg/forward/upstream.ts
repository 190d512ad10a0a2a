// Upstream servers: IP literal + port. Hosts are kept in the textual form Node reports for a
// datagram's sender (compressed lowercase IPv6), so a reply's source can be compared as a string.

const { readFileSync } = process.getBuiltinModule('node:fs');
const { isIP } = process.getBuiltinModule('node:net');
import { ForwardError } from './errors.ts';

export interface Upstream {
  /** IP literal, IPv6 without brackets. */
  host: string;
  port: number;
}

function canonicalIPv6(host: string): string {
  if (host.includes('.')) return host.toLowerCase(); // IPv4-mapped/compatible: leave the dotted tail
  try {
    return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  } catch {
    return host.toLowerCase();
  }
}

/** Checks and canonicalises one upstream; throws ForwardError 'FORWARD_BAD_UPSTREAM'. */
export function normalizeUpstream(u: Upstream): Upstream {
  const family = typeof u.host === 'string' && !u.host.includes('%') ? isIP(u.host) : 0;
  if (family === 0) throw new ForwardError('FORWARD_BAD_UPSTREAM', `upstream host ${JSON.stringify(u.host)} is not an IP address`);
  if (!Number.isInteger(u.port) || u.port < 1 || u.port > 65535) {
    throw new ForwardError('FORWARD_BAD_UPSTREAM', `upstream ${u.host} has a bad port ${JSON.stringify(u.port)}`);
  }
  return { host: family === 6 ? canonicalIPv6(u.host) : u.host, port: u.port };
}

export function formatUpstream(u: Upstream): string {
  return u.host.includes(':') ? `[${u.host}]:${u.port}` : `${u.host}:${u.port}`;
}

/**
 * The `nameserver` lines of a resolv.conf, in order, port 53. Entries that are not IP literals (or
 * carry an IPv6 zone) are skipped; a missing file gives none.
 */
export function resolvConfNameservers(path = '/etc/resolv.conf'): Upstream[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const servers: Upstream[] = [];
  for (const line of text.split('\n')) {
    const fields = line.replace(/[#;].*/, '').trim().split(/\s+/);
    if (fields[0] !== 'nameserver' || fields.length < 2) continue;
    const host = fields[1];
    if (host.includes('%') || isIP(host) === 0) continue;
    servers.push(normalizeUpstream({ host, port: 53 }));
  }
  return servers;
}
