// The one table of the kinds kube-dns reads: where the API serves each, whether readiness waits for
// it, and how the store takes it in. The API source's watches, the cluster file's kinds, the first
// sync (readiness), the store's dispatch and the RBAC test all read it: a new kind is one entry
// here plus a file (or folder) with its trim and apply.

import type { Watch } from '../source/source.ts';
import type { ClusterKind } from './kind.ts';
import { applyConfigMap } from './apply-configmap.ts';
import { applyEndpointSlice, applyEndpointSliceNamedByPod, applyEndpoints } from './apply-endpoints.ts';
import { applyNode } from './apply-node.ts';
import { applyService } from './apply-service.ts';
import { CONFIG_MAP_FIELDS } from './trim-configmap.ts';
import { ENDPOINTS_FIELDS, ENDPOINT_SLICE_FIELDS } from './trim-endpoints.ts';
import { NODE_FIELDS } from './trim-node.ts';
import { SERVICE_FIELDS } from './trim-service.ts';

export const SERVICE: ClusterKind = { kind: 'Service', api: '/api/v1', resource: 'services', optional: false, what: 'Services', protobuf: SERVICE_FIELDS, apply: applyService };
export const ENDPOINT_SLICE: ClusterKind = { kind: 'EndpointSlice', api: '/apis/discovery.k8s.io/v1', resource: 'endpointslices', optional: false, what: 'EndpointSlices discovery.k8s.io/v1', protobuf: ENDPOINT_SLICE_FIELDS, apply: applyEndpointSlice };
/** core/v1 Endpoints, instead of EndpointSlices with --endpoints-api=endpoints. */
export const ENDPOINTS: ClusterKind = { kind: 'Endpoints', api: '/api/v1', resource: 'endpoints', optional: false, what: 'Endpoints core/v1', protobuf: ENDPOINTS_FIELDS, apply: applyEndpoints };
/** The kube-dns ConfigMap (--config-map), by name. */
export const CONFIG_MAP: ClusterKind = { kind: 'ConfigMap', api: '/api/v1', resource: 'configmaps', optional: false, what: 'ConfigMaps', protobuf: CONFIG_MAP_FIELDS, apply: applyConfigMap };
/** Nodes, for federation answers (and node-cache's addresses, pkg/autopath); optional: without its RBAC nothing waits for it. */
export const NODE: ClusterKind = { kind: 'Node', api: '/api/v1', resource: 'nodes', optional: true, what: 'Nodes', protobuf: NODE_FIELDS, apply: applyNode };

export const CLUSTER_KINDS: readonly ClusterKind[] = [SERVICE, ENDPOINT_SLICE, ENDPOINTS, CONFIG_MAP, NODE];

/** EndpointSlices whose endpoints without a hostname are named by their pod (CoreDNS's `endpoint_pod_names`). */
const ENDPOINT_SLICE_NAMED_BY_POD: ClusterKind = { ...ENDPOINT_SLICE, apply: applyEndpointSliceNamedByPod };

/** The table as a program reads it: CLUSTER_KINDS, EndpointSlices named by pod with `endpointPodNames`. */
export function clusterKinds(o: { endpointPodNames?: boolean }): readonly ClusterKind[] {
  return o.endpointPodNames === true ? CLUSTER_KINDS.map((k) => (k === ENDPOINT_SLICE ? ENDPOINT_SLICE_NAMED_BY_POD : k)) : CLUSTER_KINDS;
}

/** Where endpoints come from; 'none': not read at all (CoreDNS's `noendpoints`: headless services and endpoint names NXDOMAIN). */
export type EndpointsApi = 'endpointslices' | 'endpoints' | 'none';

/** What kube-dns lists and watches from the start, by its flags. */
export function startingWatches(o: { endpointsApi: EndpointsApi; configMap: string; configMapNamespace: string }): Watch[] {
  const watches: Watch[] = [{ kind: SERVICE }];
  if (o.endpointsApi !== 'none') watches.push({ kind: o.endpointsApi === 'endpoints' ? ENDPOINTS : ENDPOINT_SLICE });
  if (o.configMap) watches.push({ kind: CONFIG_MAP, namespace: o.configMapNamespace, fieldSelector: `metadata.name=${o.configMap}` });
  return watches;
}

/** Watched once federations are configured. */
export const NODE_WATCH: Watch = { kind: NODE, why: 'federations' };
