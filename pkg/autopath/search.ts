// The kubelet's search list, as autopath walks it for a pod of namespace <ns> in zone <zone>:
//   search <ns>.svc.<zone> svc.<zone> <zone>   (options ndots:5)
// A name with fewer than five dots is first asked as `<name>.<ns>.svc.<zone>`: that query, from a
// pod of <ns>, is the one autopath answers with the end of the whole walk.

import type { Query } from '../dns/server.ts';
import { ipv4FromBytes, ipv4OfAddress } from './pod-index.ts';

export interface FirstCandidate {
  /** What the client looks up, e.g. `api.example.com` or `db.prod`. */
  name: string;
  /** The namespace whose search list this is the first candidate of. */
  namespace: string;
}

/** `<name>.<ns>.svc.<zone>` → its name and namespace; null for any other name. */
export function firstCandidate(qname: string, zone: string): FirstCandidate | null {
  // Checked in place: every NXDOMAIN of the zone comes here, a flood of made-up names included.
  const svc = qname.length - zone.length - SVC.length;
  if (svc <= 0 || !qname.endsWith(zone) || !qname.startsWith(SVC, svc)) return null;
  const dot = qname.lastIndexOf('.', svc - 1);
  if (dot <= 0) return null;
  return { name: qname.slice(0, dot), namespace: qname.slice(dot + 1, svc) };
}

const SVC = '.svc.';

/**
 * How long the walk's upstream step may wait, all upstreams together. The pod's dnscache waits 2 s for
 * kube-dns and answers SERVFAIL after that, where the client's own walk would have got NXDOMAIN at
 * once and gone on; half of it leaves the NXDOMAIN well inside. Hit, the first candidate is answered
 * as without autopath and the client walks on (its own last step asks the same upstream itself).
 */
export const WALK_UPSTREAM_BUDGET_MS = 1000;

/** The rest of the walk after the first candidate, in order; the last is the name itself (absolute). */
export function restOfWalk(name: string, zone: string): string[] {
  return [`${name}.svc.${zone}`, `${name}.${zone}`, name];
}

/**
 * The asker's IPv4 address as ipv4Number, or -1. The Client Subnet is trusted only from our own
 * forwarders (`trusts`: the pod's dnscache on loopback, node-cache from a node's address) and only
 * when it names one address (/32); from anyone else (and from them without one) the packet's source
 * counts, so no pod can speak for another namespace.
 */
export function askerIPv4(q: Query, trusts: (address: string) => boolean): number {
  const s = q.clientSubnet;
  if (s !== null && trusts(q.remoteAddress)) return s.family === 1 && s.sourcePrefix === 32 ? ipv4FromBytes(s.address) : -1;
  return ipv4OfAddress(q.remoteAddress);
}
