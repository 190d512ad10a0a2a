// ConfigMap data → KubeDnsConfig, validated as kubernetes/dns does (config.go Validate), with its bugs
// fixed: a stub server "name:port" is accepted (the original checked the whole string, port included,
// as a DNS name), an empty port ("1.2.3.4:") or port 0 is rejected, labels over 63 bytes are rejected,
// and domains may carry a trailing dot or capitals (they are normalised rather than refused).

import { ConfigError } from './errors.ts';
import { isStringArray, parseJson } from './json.ts';
import { emptyConfig } from './model.ts';
import type { KubeDnsConfig } from './model.ts';
import { isDns1123Label, isDns1123Subdomain, normalizeDomain } from './names.ts';
import { checkStubServer, checkUpstream } from './upstream.ts';
import { parseVisibility } from './visibility.ts';

export const MAX_UPSTREAM_NAMESERVERS = 3;

const quote = JSON.stringify;

/** The deprecated flag/ConfigMap format "name=domain,name2=domain2" (not JSON). */
export function parseFederations(text: string, key = 'federations'): Map<string, string> {
  const out = new Map<string, string>();
  if (text.trim() === '') return out;
  for (const entry of text.split(',')) {
    const eq = entry.indexOf('=');
    if (eq < 0) throw new ConfigError('CONFIG_INVALID', key, entry, `${key}: ${quote(entry.trim())} is not name=domain`);
    const name = entry.slice(0, eq).trim().toLowerCase();
    const domain = normalizeDomain(entry.slice(eq + 1).trim());
    if (!isDns1123Label(name)) {
      throw new ConfigError('CONFIG_INVALID', key, entry, `${key}: federation name ${quote(name)} is not a valid DNS label`);
    }
    if (!isDns1123Subdomain(domain)) {
      throw new ConfigError('CONFIG_INVALID', key, entry, `${key}: federation domain ${quote(domain)} is not a valid domain name`);
    }
    out.set(name, domain);
  }
  return out;
}

function parseStubDomains(text: string): Map<string, string[]> {
  const key = 'stubDomains';
  const json = parseJson(key, text);
  const out = new Map<string, string[]>();
  if (json === null) return out;
  if (typeof json !== 'object' || Array.isArray(json)) {
    throw new ConfigError('CONFIG_JSON', key, '', `${key}: expected a JSON object of domain → [servers]`);
  }
  for (const [rawDomain, servers] of Object.entries(json)) {
    if (!isStringArray(servers) && servers !== null) {
      throw new ConfigError('CONFIG_JSON', key, rawDomain, `${key}: ${quote(rawDomain)}: expected an array of server strings`);
    }
    const domain = normalizeDomain(rawDomain);
    if (!isDns1123Subdomain(domain)) {
      throw new ConfigError('CONFIG_INVALID', key, rawDomain, `${key}: ${quote(rawDomain)} is not a valid domain name`);
    }
    if (out.has(domain)) {
      throw new ConfigError('CONFIG_INVALID', key, rawDomain, `${key}: ${quote(rawDomain)} is listed twice`);
    }
    for (const server of servers ?? []) {
      const r = checkStubServer(server);
      if (typeof r === 'string') {
        throw new ConfigError('CONFIG_INVALID', key, server, `${key}: ${quote(rawDomain)}: invalid nameserver ${quote(server)}: ${r}`);
      }
    }
    out.set(domain, [...(servers ?? [])]);
  }
  return out;
}

function parseUpstreamNameservers(text: string): string[] {
  const key = 'upstreamNameservers';
  const json = parseJson(key, text);
  if (json === null) return [];
  if (!isStringArray(json)) throw new ConfigError('CONFIG_JSON', key, '', `${key}: expected a JSON array of strings`);
  if (json.length > MAX_UPSTREAM_NAMESERVERS) {
    throw new ConfigError(
      'CONFIG_INVALID',
      key,
      json.join(','),
      `${key}: at most ${MAX_UPSTREAM_NAMESERVERS} entries are allowed, got ${json.length}`,
    );
  }
  for (const server of json) {
    const r = checkUpstream(server);
    if (typeof r === 'string') {
      throw new ConfigError('CONFIG_INVALID', key, server, `${key}: invalid nameserver ${quote(server)}: ${r}`);
    }
  }
  return json;
}

/**
 * The ConfigMap's data (or a --config-dir's files) → config. Keys other than federations, stubDomains,
 * upstreamNameservers and visibility are ignored; a missing or blank value means the default (empty).
 * Throws ConfigError: 'CONFIG_JSON' for unparseable JSON or a wrong shape, 'CONFIG_INVALID' for an
 * entry that fails validation.
 */
export function parseConfig(data: Readonly<Record<string, string>>): KubeDnsConfig {
  const config = emptyConfig();
  const present = (key: string): string | undefined => {
    const v = Object.hasOwn(data, key) ? data[key] : undefined;
    return v === undefined || v.trim() === '' ? undefined : v;
  };
  const federations = present('federations');
  if (federations !== undefined) config.federations = parseFederations(federations);
  const stubDomains = present('stubDomains');
  if (stubDomains !== undefined) config.stubDomains = parseStubDomains(stubDomains);
  const upstreams = present('upstreamNameservers');
  if (upstreams !== undefined) config.upstreamNameservers = parseUpstreamNameservers(upstreams);
  const visibility = present('visibility');
  if (visibility !== undefined) config.visibility = parseVisibility(visibility);
  return config;
}
