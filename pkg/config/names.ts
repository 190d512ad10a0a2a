// The name and address checks config parsing uses. The DNS-1123 rules and the IP parser live in pkg/dns
// (shared with pkg/cluster); only the domain spelling config keeps is its own.

export { isDns1123Label, isDns1123Subdomain } from '../dns/dns1123.ts';

/** 4 or 6 for an IP literal as Go's net.ParseIP takes it (no zone suffix), else 0. */
export { ipVersion as ipFamily } from '../dns/ip.ts';

/** How domains are kept: lowercase, without the one trailing dot an FQDN may carry. */
export function normalizeDomain(s: string): string {
  const lower = s.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
