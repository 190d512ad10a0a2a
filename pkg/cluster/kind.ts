// What one entry of the table of kinds (kinds.ts) is, and what of the store its `apply` may touch.

import type { SourceEvent, WatchedKind } from '../source/source.ts';
import type { ConfigMapInfo, EndpointSetInfo, NodeTopology, ServiceInfo } from './model.ts';

/** The store's state as the kinds' `apply` functions see it. */
export interface StoreState {
  readonly services: Map<string, ServiceInfo>;
  /** service key → its endpoint sets (a list: services have one or two slices, and a Map each costs ~450 bytes). */
  readonly endpoints: Map<string, EndpointSetInfo[]>;
  /** Which service each endpoint object (kind/ns/name) fed last, to clean up when it moves or goes. */
  readonly endpointOwners: Map<string, { service: string; ids: string[] }>;
  /** Node name → its topology, only for nodes labelled with both zone and region. */
  readonly nodes: Map<string, NodeTopology>;
  /** The service (`namespace/name`) must be rebuilt at the end of the batch. */
  touch(serviceKey: string): void;
  /** An object was dropped whole or in part; each problem says what and why. */
  report(kind: string, problems: string[]): void;
  /** A ConfigMap was added, changed or deleted (null). */
  configMapChanged(cm: ConfigMapInfo | null, name: string, namespace: string): void;
}

/** One kind kube-dns reads: where the API serves it (WatchedKind) and how the store takes it in. */
export interface ClusterKind extends WatchedKind {
  /** Trims the event's object and applies it to the store. */
  apply(store: StoreState, e: SourceEvent): void;
}

/** `namespace/name`; objects without a namespace are in "default", as kubectl applies them. */
export function objectKey(e: SourceEvent): string {
  return `${e.object.metadata.namespace ?? 'default'}/${e.object.metadata.name}`;
}
