// The one interface through which cluster objects reach kube-dns. A source (the cluster file, the
// Kubernetes API) emits raw objects exactly as the API serves them; the sink trims them. Which kinds
// a source reads is given to it (pkg/cluster's table of kinds): a source knows no kind by name.

import type { ProtoSchema } from './kubernetes-protobuf.ts';

/** A kind of object a source reads, as the API serves it. */
/** A forgetful kind's relist frame: relisting() before the first listed object, relisted() after the last. */
export interface RelistHooks {
  relisting(): void;
  relisted(): void;
}

export interface WatchedKind {
  /** The object's `kind` (Service, EndpointSlice, ...). */
  kind: string;
  /** The API group's path: `/api/v1` for core, `/apis/<group>/<version>` otherwise. */
  api: string;
  /** Older versions to try in turn while the server does not serve `api` (404), e.g. a CRD's. */
  fallbackApis?: readonly string[];
  /** The resource's plural name in URLs (services, endpointslices). */
  resource: string;
  /** The zone can do without it: its first list never holds the first sync (readiness). */
  optional: boolean;
  /** How logs name a list of them: "Services", "EndpointSlices discovery.k8s.io/v1". */
  what: string;
  /**
   * For kinds too numerous to remember (Pods): the source keeps nothing per object, so it cannot diff
   * a relist into deletes. It calls relisting() before the first listed object and relisted() after
   * the last (each listed object an add), and the kind drops what the list did not name. Watch events
   * arrive as they come (every MODIFIED an update, every DELETED a delete).
   */
  forgetful?: RelistHooks;
  /**
   * The fields its trim reads, by protobuf field number: lists are then asked in protobuf and only
   * these fields decoded (absent: JSON; a CRD is served in JSON only).
   */
  protobuf?: ProtoSchema;
}

/** One kind to list and watch: in every namespace, or one with a field selector (the ConfigMap). */
export interface Watch {
  kind: WatchedKind;
  namespace?: string;
  fieldSelector?: string;
  /** Why it is read, for logs when it is not always ("federations"). */
  why?: string;
}

/** The collection a watch lists, e.g. /api/v1/services or /api/v1/namespaces/kube-system/configmaps; `api` another version's path. */
export function collectionPath(w: Watch, api = w.kind.api): string {
  const ns = w.namespace ? `/namespaces/${encodeURIComponent(w.namespace)}` : '';
  return `${api}${ns}/${w.kind.resource}`;
}

/** Every collection path a watch may list, the preferred version first. */
export function collectionPaths(w: Watch): string[] {
  return [w.kind.api, ...(w.kind.fallbackApis ?? [])].map((api) => collectionPath(w, api));
}

/** One line for logs: what a watch reads. */
export function describeWatch(w: Watch): string {
  const name = w.fieldSelector?.startsWith('metadata.name=') ? w.fieldSelector.slice('metadata.name='.length) : null;
  if (name !== null && w.namespace) return `${w.kind.kind} ${w.namespace}/${name}`;
  return `${w.kind.what} (${w.why ?? (w.namespace ? `namespace ${w.namespace}` : 'all namespaces')})`;
}

/** A Kubernetes object as `kubectl get -o yaml` prints it; only the fields DNS reads are typed. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export interface SourceEvent {
  type: 'add' | 'update' | 'delete';
  /** A WatchedKind's `kind`. */
  kind: string;
  object: KubeObject;
}

export interface SourceSink {
  /** One object changed. Events of one batch arrive synchronously, followed by `flush()`. */
  event(e: SourceEvent): void;
  /** The end of a batch of events: the sink may now rebuild what they touched. */
  flush(): void;
  /** The source has delivered a complete view once (the initial list). Called once. */
  synced(): void;
}

export interface Source {
  /** Starts delivering events; resolves once started (not necessarily synced). */
  start(sink: SourceSink): Promise<void>;
  stop(): Promise<void>;
  /** One line for logs: what this source reads. */
  describe(): string;
  /**
   * Also list and watch `w` from now on (Nodes, once federations are configured): before start()
   * with the rest, after it at once. Sources that read every kind they were given omit it.
   */
  watch?(w: Watch): void;
}
