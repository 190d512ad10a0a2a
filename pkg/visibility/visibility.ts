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
  if (!qname.endsWith(`.${zone}`)) return null;
  const rest = qname.slice(0, qname.length - zone.length - 1);
  const dot = rest.lastIndexOf('.');
  const kind = rest.slice(dot + 1);
  if (dot < 0 || (kind !== 'svc' && kind !== 'pod')) return null;
  const labels = rest.slice(0, dot).split('.');
  let at = labels.length - 1;
  if (kind === 'svc' && at >= 2 && federations?.has(labels[at]) === true) at--;
  return { namespace: labels[at], service: kind === 'svc' && at > 0 ? labels[at - 1] : null };
}

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
