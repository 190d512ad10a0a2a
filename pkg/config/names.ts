// Name checks as Kubernetes' apimachinery validation defines them (IsDNS1123Label, IsDNS1123Subdomain),
// plus the per-label 63-byte limit that IsDNS1123Subdomain forgets.

const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && label.test(s);
}

export function isDns1123Subdomain(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false;
  for (const part of s.split('.')) if (!isDns1123Label(part)) return false;
  return true;
}

/** 4 or 6 for an IP literal as Go's net.ParseIP takes it (no zone suffix), else 0. */
export { ipVersion as ipFamily } from '../dns/ip.ts';

/** How domains are kept: lowercase, without the one trailing dot an FQDN may carry. */
export function normalizeDomain(s: string): string {
  const lower = s.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
