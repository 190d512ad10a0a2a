// Federation queries, as the original's Records/recordsForFederation/federationRecords answered them:
// `<svc>.<ns>.<fed>.svc.<zone>` with `<fed>` a configured federation name is a CNAME, to the local
// service while it has usable endpoints, else to the same service in the federation's domain, placed by
// the zone and region of this cluster's nodes. Pure: the resolver passes in what it knows.

import { isDns1123Label } from '../dns/dns1123.ts';
import type { NodeTopology } from '../cluster/model.ts';

/** RFC 1035 label (IsDNS1035Label): a letter first, no trailing dash. */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface FederationQuery {
  service: string;
  namespace: string;
  federation: string;
  /** The federation's domain (lowercase, no trailing dot). */
  domain: string;
}

export type FederationAnswer =
  /** CNAME to the local service `<svc>.<ns>.svc.<zone>`. */
  | { kind: 'local'; target: string }
  /** CNAME to `<svc>.<ns>.<fed>.svc.<zone-label>.<region-label>.<fed-domain>`. */
  | { kind: 'remote'; target: string }
  /** No local endpoints and no labelled node: the name does not exist. */
  | { kind: 'nxdomain' };

/**
 * A federation query, or null. `labels` are the name's labels below the cluster zone, in query order
 * (`['web', 'app', 'myfed', 'svc']`). The federation name is checked before anything else, so
 * `<svc>.<ns>.<fed>.svc` is never a lookup of a namespace named like a federation.
 */
export function federationQuery(labels: readonly string[], federations: ReadonlyMap<string, string>): FederationQuery | null {
  if (labels.length !== 4 || labels[3] !== 'svc') return null;
  const [service, namespace, federation] = labels;
  const domain = federations.get(federation);
  if (domain === undefined) return null;
  if (!DNS1035_LABEL.test(service) || !isDns1123Label(namespace) || !isDns1123Label(federation)) return null;
  return { service, namespace, federation, domain };
}

/**
 * The answer to a federation query. `hasEndpoints(ns, svc)` says whether the local service is usable
 * (ClusterIP: some endpoint; headless or ExternalName: it publishes a record); `topology` is that of the
 * first labelled node, or null.
 */
export function federationAnswer(
  q: FederationQuery,
  clusterDomain: string,
  hasEndpoints: (namespace: string, service: string) => boolean,
  topology: NodeTopology | null,
): FederationAnswer {
  if (hasEndpoints(q.namespace, q.service)) return { kind: 'local', target: `${q.service}.${q.namespace}.svc.${clusterDomain}` };
  if (topology === null) return { kind: 'nxdomain' };
  return { kind: 'remote', target: `${q.service}.${q.namespace}.${q.federation}.svc.${topology.zone}.${topology.region}.${q.domain}` };
}
