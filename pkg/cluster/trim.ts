// pkg/cluster's trimming surface: raw Kubernetes objects in, the model DNS needs out (see README.md).

export type { TrimResult } from './trim-common.ts';
export { DEFAULT_NAMESPACE, isDns1123Label, isDns1123Subdomain } from './trim-common.ts';
export { trimService, TOLERATE_UNREADY_ANNOTATION } from './trim-service.ts';
export { trimEndpointSlice, trimEndpoints, SERVICE_NAME_LABEL } from './trim-endpoints.ts';
export { trimConfigMap } from './trim-configmap.ts';
export { trimNode } from './trim-node.ts';
