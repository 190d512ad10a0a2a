// What kube-dns keeps of each cluster object: only the fields DNS needs (CoreDNS trims the same way).

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface PortInfo {
  /** The port's name; '' when unnamed (unnamed ports get no SRV record). */
  name: string;
  port: number;
  protocol: Protocol;
}

export type ServiceKind = 'ClusterIP' | 'Headless' | 'ExternalName';

export interface ServiceInfo {
  namespace: string;
  name: string;
  kind: ServiceKind;
  /** spec.clusterIPs (else spec.clusterIP), canonical text form; empty for Headless/ExternalName. */
  clusterIPs: string[];
  /** spec.externalName without a trailing dot, lowercased; '' unless kind is ExternalName. */
  externalName: string;
  ports: PortInfo[];
  /** spec.publishNotReadyAddresses, or the old tolerate-unready-endpoints annotation. */
  publishNotReadyAddresses: boolean;
}

export interface EndpointInfo {
  /** Canonical text IPs (IPv4 dotted, IPv6 RFC 5952). */
  addresses: string[];
  /** endpoint.hostname (EndpointSlice) or address.hostname (Endpoints); '' when unset. */
  hostname: string;
  ready: boolean;
}

/** One EndpointSlice, or one subset of a core/v1 Endpoints object. */
export interface EndpointSetInfo {
  namespace: string;
  /** The service these endpoints belong to (the kubernetes.io/service-name label, or the Endpoints name). */
  service: string;
  /** Unique within the service: `slice/<name>` or `endpoints/<name>/<subset index>`. */
  id: string;
  endpoints: EndpointInfo[];
  ports: PortInfo[];
}

/** The kube-dns ConfigMap's data, as given (parsed later by pkg/config). */
export interface ConfigMapInfo {
  namespace: string;
  name: string;
  data: Record<string, string>;
}

/** A Node's topology labels, lowercased: all kube-dns keeps of a Node (for federation answers). */
export interface NodeTopology {
  zone: string;
  region: string;
}
