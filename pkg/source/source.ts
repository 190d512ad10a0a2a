// The one interface through which cluster objects reach kube-dns. A source (the cluster file today,
// the Kubernetes API later) emits raw objects exactly as the API serves them; the sink trims them.

export type ObjectKind = 'Service' | 'EndpointSlice' | 'Endpoints' | 'ConfigMap' | 'Node';

/** Node: only its topology labels are kept, for federation answers (the API source lists Nodes only when asked). */
export const OBJECT_KINDS: readonly ObjectKind[] = ['Service', 'EndpointSlice', 'Endpoints', 'ConfigMap', 'Node'];
/** Kinds the zone can do without: their first list never holds the first sync (readiness). */
export const OPTIONAL_KINDS: ReadonlySet<ObjectKind> = new Set(['Node']);

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
  kind: ObjectKind;
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
  /** Also read Nodes from now on (federations are configured). Sources that always read them omit it. */
  watchNodes?(): void;
}
