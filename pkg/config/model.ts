// The kube-dns ConfigMap as a value (kubernetes/dns pkg/dns/config Config).

export interface KubeDnsConfig {
  /** Domain (lowercase, no trailing dot) → its servers as written: "1.2.3.4", "1.2.3.4:5353", "[fd00::1]:53", "ns.corp". */
  stubDomains: Map<string, string[]>;
  /** At most 3, each "ip", "ip:port" or "[ipv6]:port". Empty: use /etc/resolv.conf. */
  upstreamNameservers: string[];
  /** Federation name (lowercase) → its domain (lowercase, no trailing dot). */
  federations: Map<string, string>;
  /** Domains whose names are not forwarded, SERVFAIL (a Corefile forward's `except`; no ConfigMap key). */
  forwardExcept?: string[];
  /** `visibility` (visibility.ts): which namespaces' names each namespace's pods may resolve; null: no policy. */
  visibility: VisibilityPolicy | null;
}

export interface VisibilityPolicy {
  /** A namespace → the other namespaces its pods see ("*": all). */
  allow: ReadonlyMap<string, ReadonlySet<string>>;
  /** Namespaces every pod sees, and single Services ("ns/name"). */
  sharedNamespaces: ReadonlySet<string>;
  sharedServices: ReadonlySet<string>;
  /** What an asker whose namespace is not known gets. */
  unknownAskers: 'allow' | 'deny';
}

export function emptyConfig(): KubeDnsConfig {
  return { stubDomains: new Map(), upstreamNameservers: [], federations: new Map(), visibility: null };
}
