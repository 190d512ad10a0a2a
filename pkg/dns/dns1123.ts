// Name checks as Kubernetes' apimachinery validation defines them (IsDNS1123Label, IsDNS1123Subdomain),
// plus the per-label 63-byte limit that IsDNS1123Subdomain forgets. Here, not in pkg/config or
// pkg/cluster, because both use them and pkg/dns is the one package both may import. They take any
// value: objects from files and the API are not trusted to hold strings where they should.

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A DNS-1123 label as Kubernetes validates names: ≤63 of [a-z0-9-], alphanumeric at both ends. */
export function isDns1123Label(s: unknown): s is string {
  return typeof s === 'string' && LABEL.test(s);
}

/** A DNS-1123 subdomain: ≤253 characters of dot-separated DNS-1123 labels. */
export function isDns1123Subdomain(s: unknown): s is string {
  if (typeof s !== 'string' || s.length === 0 || s.length > 253) return false;
  let start = 0;
  for (;;) {
    const dot = s.indexOf('.', start);
    const label = dot < 0 ? s.slice(start) : s.slice(start, dot);
    if (!LABEL.test(label)) return false;
    if (dot < 0) return true;
    start = dot + 1;
  }
}
