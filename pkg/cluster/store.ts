// The store of trimmed cluster objects: one writer (the source), read by the zone builder. Each event
// goes to its kind's `apply` (the table of kinds, kinds.ts); the store remembers which services a
// batch of events touched, so only those are rebuilt on flush.

import type { SourceEvent, SourceSink } from '../source/source.ts';
import type { ClusterKind, StoreState } from './kind.ts';
import type { ConfigMapInfo, EndpointSetInfo, NodeTopology, ServiceInfo } from './model.ts';

export interface StoreListener {
  /** Services whose records must be rebuilt (keys `namespace/name`). */
  servicesChanged(keys: ReadonlySet<string>): void;
  /** A ConfigMap was added, changed or deleted (null). */
  configMapChanged?(cm: ConfigMapInfo | null, name: string, namespace: string): void;
  /** An object was dropped whole or in part; `problem` says what and why. */
  rejected?(kind: string, problem: string): void;
  synced?(): void;
}

export interface StoreCounts {
  services: number;
  endpointSets: number;
  endpoints: number;
}

export class ClusterStore implements SourceSink, StoreState {
  readonly services = new Map<string, ServiceInfo>();
  readonly endpoints = new Map<string, EndpointSetInfo[]>();
  readonly endpointOwners = new Map<string, { service: string; ids: string[] }>();
  readonly nodes = new Map<string, NodeTopology>();
  private readonly kinds: ReadonlyMap<string, ClusterKind>;
  private readonly dirty = new Set<string>();
  private readonly listener: StoreListener;
  private isSynced = false;

  /** `kinds`: the table (kinds.ts); an event of another kind is rejected. */
  constructor(listener: StoreListener, kinds: readonly ClusterKind[]) {
    this.listener = listener;
    this.kinds = new Map(kinds.map((k) => [k.kind, k]));
  }

  get hasSynced(): boolean {
    return this.isSynced;
  }

  event(e: SourceEvent): void {
    const kind = this.kinds.get(e.kind);
    if (kind === undefined) this.report(e.kind, [`${e.object.metadata.name}: not a kind kube-dns reads`]);
    else kind.apply(this, e);
  }

  flush(): void {
    // Nothing is served before the first sync: the services are built once, at synced(), rather than
    // again for each list page that touches them (a Service and its slices come in separate lists).
    if (!this.isSynced || this.dirty.size === 0) return;
    const keys = new Set(this.dirty);
    this.dirty.clear();
    this.listener.servicesChanged(keys);
  }

  synced(): void {
    this.isSynced = true;
    this.flush();
    this.listener.synced?.();
  }

  touch(serviceKey: string): void {
    this.dirty.add(serviceKey);
  }

  report(kind: string, problems: string[]): void {
    for (const p of problems) this.listener.rejected?.(kind, p);
  }

  configMapChanged(cm: ConfigMapInfo | null, name: string, namespace: string): void {
    this.listener.configMapChanged?.(cm, name, namespace);
  }

  /** The services (`namespace/name`) with an endpoint at one of `addresses`, ready or not. Walks every endpoint: for a rare question (a lame duck's). */
  servicesWith(addresses: ReadonlySet<string>): string[] {
    const found: string[] = [];
    for (const [service, sets] of this.endpoints) {
      if (sets.some((set) => set.endpoints.some((e) => e.addresses.some((a) => addresses.has(a))))) found.push(service);
    }
    return found;
  }

  endpointSets(serviceKey: string): EndpointSetInfo[] {
    return this.endpoints.get(serviceKey) ?? [];
  }

  /** The topology of the first labelled node (insertion order), or null when no node is labelled. */
  topology(): NodeTopology | null {
    for (const t of this.nodes.values()) return t;
    return null;
  }

  counts(): StoreCounts {
    let endpointSets = 0;
    let endpoints = 0;
    for (const sets of this.endpoints.values()) {
      endpointSets += sets.length;
      for (const s of sets) endpoints += s.endpoints.length;
    }
    return { services: this.services.size, endpointSets, endpoints };
  }
}
