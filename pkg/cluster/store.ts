// The store of trimmed cluster objects: one writer (the source), read by the zone builder.
// It remembers which services a batch of events touched, so only those are rebuilt on flush.

import type { SourceEvent, SourceSink } from '../source/source.ts';
import type { ConfigMapInfo, EndpointSetInfo, NodeTopology, ServiceInfo } from './model.ts';
import { trimConfigMap, trimEndpointSlice, trimEndpoints, trimNode, trimService } from './trim.ts';

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

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

export class ClusterStore implements SourceSink {
  readonly services = new Map<string, ServiceInfo>();
  /** service key → its endpoint sets (a list: services have one or two slices, and a Map each costs ~450 bytes). */
  readonly endpoints = new Map<string, EndpointSetInfo[]>();
  /** Which service each endpoint object (kind/ns/name) fed last, to clean up when it moves or goes. */
  private readonly endpointOwners = new Map<string, { service: string; ids: string[] }>();
  /** Node name → its topology, only for nodes labelled with both zone and region. */
  readonly nodes = new Map<string, NodeTopology>();
  private readonly dirty = new Set<string>();
  private readonly listener: StoreListener;
  private isSynced = false;

  constructor(listener: StoreListener) {
    this.listener = listener;
  }

  get hasSynced(): boolean {
    return this.isSynced;
  }

  event(e: SourceEvent): void {
    switch (e.kind) {
      case 'Service':
        return this.serviceEvent(e);
      case 'EndpointSlice':
      case 'Endpoints':
        return this.endpointsEvent(e);
      case 'ConfigMap':
        return this.configMapEvent(e);
      case 'Node':
        return this.nodeEvent(e);
    }
  }

  flush(): void {
    if (this.dirty.size === 0) return;
    const keys = new Set(this.dirty);
    this.dirty.clear();
    this.listener.servicesChanged(keys);
  }

  synced(): void {
    this.isSynced = true;
    this.listener.synced?.();
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

  private report(kind: string, problems: string[]): void {
    for (const p of problems) this.listener.rejected?.(kind, p);
  }

  private serviceEvent(e: SourceEvent): void {
    const meta = e.object.metadata;
    const k = key(meta.namespace ?? 'default', meta.name);
    if (e.type === 'delete') {
      if (this.services.delete(k)) this.dirty.add(k);
      return;
    }
    const { value, problems } = trimService(e.object);
    this.report('Service', problems);
    // An unusable update removes what the old version published rather than serving stale data.
    if (value) this.services.set(k, value);
    else this.services.delete(k);
    this.dirty.add(k);
  }

  private endpointsEvent(e: SourceEvent): void {
    const meta = e.object.metadata;
    const objectKey = `${e.kind}/${meta.namespace ?? 'default'}/${meta.name}`;
    this.dropEndpointObject(objectKey);
    if (e.type === 'delete') return;
    let sets: EndpointSetInfo[] = [];
    if (e.kind === 'EndpointSlice') {
      const { value, problems } = trimEndpointSlice(e.object);
      this.report(e.kind, problems);
      if (value) sets = [value];
    } else {
      const { value, problems } = trimEndpoints(e.object);
      this.report(e.kind, problems);
      if (value) sets = value;
    }
    if (sets.length === 0) return;
    const service = key(sets[0].namespace, sets[0].service);
    const ids = new Set(sets.map((s) => s.id));
    const others = (this.endpoints.get(service) ?? []).filter((s) => !ids.has(s.id));
    this.endpoints.set(service, [...others, ...sets]);
    this.endpointOwners.set(objectKey, { service, ids: sets.map((s) => s.id) });
    this.dirty.add(service);
  }

  private dropEndpointObject(objectKey: string): void {
    const owner = this.endpointOwners.get(objectKey);
    if (!owner) return;
    this.endpointOwners.delete(objectKey);
    const left = this.endpoints.get(owner.service)?.filter((s) => !owner.ids.includes(s.id)) ?? [];
    if (left.length > 0) this.endpoints.set(owner.service, left);
    else this.endpoints.delete(owner.service);
    this.dirty.add(owner.service);
  }

  private configMapEvent(e: SourceEvent): void {
    const meta = e.object.metadata;
    const namespace = meta.namespace ?? 'default';
    if (e.type === 'delete') {
      this.listener.configMapChanged?.(null, meta.name, namespace);
      return;
    }
    const { value, problems } = trimConfigMap(e.object);
    this.report('ConfigMap', problems);
    this.listener.configMapChanged?.(value, meta.name, namespace);
  }

  private nodeEvent(e: SourceEvent): void {
    const name = e.object.metadata.name;
    if (e.type === 'delete') {
      this.nodes.delete(name);
      return;
    }
    const { value, problems } = trimNode(e.object);
    this.report('Node', problems);
    if (value) this.nodes.set(name, value);
    else this.nodes.delete(name);
  }
}
