// Who may resolve what (issue 26): the owner of a cluster name (its namespace, and its Service where
// the name has one) and whether a namespace's pods see it under the ConfigMap's `visibility` policy
// (pkg/config visibility.ts). What a pod may not see is answered as a name that does not exist.

import type { VisibilityPolicy } from '../config/model.ts';

export interface NameOwner {
  namespace: string;
  /** The Service the name belongs to; null for a namespace's own name or a pod record. */
  service: string | null;
}

/**
 * The namespace (and Service) a name of the cluster zone `zone` belongs to, or null for the names no
 * namespace owns (the zone's apex, `svc.<zone>`, `pod.<zone>`). `<...>.<svc>.<ns>.svc.<zone>` (records,
 * SRV, endpoints), `<ns>.svc.<zone>`, `<...>.<ns>.pod.<zone>`, and a federation's
 * `<svc>.<ns>.<federation>.svc.<zone>`.
 */
export function ownerOf(qname: string, zone: string, federations?: ReadonlyMap<string, string>): NameOwner | null {
  // Read from the end, label by label: every answer of the zone asks this under a policy.
  const end = qname.length - zone.length - 1;
  if (end <= 0 || qname.charCodeAt(end) !== DOT || !qname.endsWith(zone)) return null;
  const kindDot = qname.lastIndexOf('.', end - 1);
  const svc = end - kindDot === 4 && qname.startsWith('svc', kindDot + 1);
  if (kindDot <= 0 || (!svc && !(end - kindDot === 4 && qname.startsWith('pod', kindDot + 1)))) return null;
  let nsEnd = kindDot;
  let nsDot = qname.lastIndexOf('.', nsEnd - 1);
  // `<svc>.<ns>.<federation>.svc.<zone>`: two labels before the federation's.
  if (svc && nsDot > 0 && qname.lastIndexOf('.', nsDot - 1) >= 0 && federations?.has(qname.slice(nsDot + 1, nsEnd)) === true) {
    nsEnd = nsDot;
    nsDot = qname.lastIndexOf('.', nsEnd - 1);
  }
  const namespace = qname.slice(nsDot + 1, nsEnd);
  if (!svc || nsDot < 0) return { namespace, service: null };
  return { namespace, service: qname.slice(qname.lastIndexOf('.', nsDot - 1) + 1, nsDot) };
}

const DOT = 46;

/** Whether pods of `asker` (undefined: not known) see names of `owner` under `policy`. */
export function sees(policy: VisibilityPolicy, asker: string | undefined, owner: NameOwner): boolean {
  if (asker === undefined) return policy.unknownAskers === 'allow';
  if (asker === owner.namespace || policy.sharedNamespaces.has(owner.namespace)) return true;
  if (owner.service !== null && policy.sharedServices.has(`${owner.namespace}/${owner.service}`)) return true;
  const allowed = policy.allow.get(asker);
  return allowed !== undefined && (allowed.has(owner.namespace) || allowed.has('*'));
}

/** The policy as the operator wrote it (for the log line that says it is in force); null: none. */
export function describePolicy(policy: VisibilityPolicy | null): object | null {
  if (policy === null) return null;
  return {
    allow: Object.fromEntries([...policy.allow].map(([ns, seen]) => [ns, [...seen]])),
    shared: [...policy.sharedNamespaces, ...policy.sharedServices],
    unknownAskers: policy.unknownAskers,
  };
}
