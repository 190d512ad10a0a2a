// A ServiceEntry (networking.istio.io) as DNS needs it: its hosts and the addresses they answer with.
// Never throws, whatever the object holds; every part dropped is one problem line.

import { canonicalIP } from '../cluster/ip.ts';
import { asArray, asRecord, isDns1123Subdomain, objectRef } from '../cluster/trim-common.ts';
import type { TrimResult } from '../cluster/trim-common.ts';
import type { KubeObject } from '../source/source.ts';

export interface ServiceEntryInfo {
  namespace: string;
  name: string;
  /** Lowercased, no trailing dot; `*.example` stands for every name below `example`. */
  hosts: string[];
  /** Canonical IPs: spec.addresses (single addresses), else, with resolution STATIC, the endpoints'. */
  addresses: string[];
}

/** A host: a DNS name, or `*.` and one. */
function host(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const h = v.toLowerCase().replace(/\.$/, '');
  const name = h.startsWith('*.') ? h.slice(2) : h;
  return isDns1123Subdomain(name) && name.includes('.') ? h : null;
}

/** An address or a CIDR of one address (/32, /128); null for anything wider or not an IP. */
function singleAddress(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const [ip, bits, ...rest] = v.split('/');
  const canonical = canonicalIP(ip);
  if (canonical === null || rest.length > 0) return null;
  if (bits === undefined) return canonical;
  return bits === (canonical.includes(':') ? '128' : '32') ? canonical : null;
}

export function trimServiceEntry(o: KubeObject): TrimResult<ServiceEntryInfo> {
  const ref = objectRef('ServiceEntry', o);
  const problems: string[] = [];
  const spec = asRecord((o as Record<string, unknown>).spec) ?? {};
  if (spec.resolution === 'NONE') return { value: null, problems: [`${ref.text}: resolution NONE, nothing to answer with`] };
  const hosts: string[] = [];
  for (const h of asArray(spec.hosts)) {
    const ok = host(h);
    if (ok === null) problems.push(`${ref.text}: host ${JSON.stringify(h)} is not a DNS name, dropped`);
    else if (!hosts.includes(ok)) hosts.push(ok);
  }
  const addresses: string[] = [];
  const add = (v: unknown, what: string) => {
    const ip = singleAddress(v);
    if (ip === null) problems.push(`${ref.text}: ${what} ${JSON.stringify(v)} is not a single address, skipped`);
    else if (!addresses.includes(ip)) addresses.push(ip);
  };
  for (const a of asArray(spec.addresses)) add(a, 'address');
  if (addresses.length === 0 && spec.resolution === 'STATIC') {
    for (const e of asArray(spec.endpoints)) add(asRecord(e)?.address, 'endpoint address');
  }
  if (hosts.length === 0 || addresses.length === 0) {
    problems.push(`${ref.text}: ${hosts.length === 0 ? 'no usable host' : 'no address to answer with'}, skipped`);
    return { value: null, problems };
  }
  return { value: { namespace: ref.namespace, name: ref.name, hosts, addresses }, problems };
}
