// ServiceEntries as a watched kind (--service-entries): the entry kube-dns adds to the table of kinds.
// Optional (readiness never waits for it: the CRD may not be installed); the API serves it under
// networking.istio.io, newest version first.

import type { ClusterKind } from '../cluster/kind.ts';
import type { SourceEvent } from '../source/source.ts';
import type { ServiceEntryNames } from './names.ts';
import { trimServiceEntry } from './trim.ts';

export const SERVICE_ENTRY_KIND = 'ServiceEntry';

/** Versions of networking.istio.io to try, newest first (v1 since Istio 1.22). */
export const SERVICE_ENTRY_APIS = ['/apis/networking.istio.io/v1', '/apis/networking.istio.io/v1beta1', '/apis/networking.istio.io/v1alpha3'];

export interface ServiceEntryEvents {
  /** The names changed (an entry added, changed or removed). */
  changed(): void;
  /** Part or all of an entry was skipped; `problem` says what and why. */
  rejected(problem: string): void;
}

/** The ServiceEntry kind, keeping its entries in `names`. */
export function serviceEntryKind(names: ServiceEntryNames, events: ServiceEntryEvents): ClusterKind {
  return {
    kind: SERVICE_ENTRY_KIND,
    api: SERVICE_ENTRY_APIS[0],
    fallbackApis: SERVICE_ENTRY_APIS.slice(1),
    resource: 'serviceentries',
    optional: true,
    what: 'ServiceEntries networking.istio.io',
    apply(_store, e: SourceEvent) {
      const key = `${e.object.metadata.namespace ?? 'default'}/${e.object.metadata.name}`;
      let entry = null;
      if (e.type !== 'delete') {
        const { value, problems } = trimServiceEntry(e.object);
        for (const p of problems) events.rejected(p);
        entry = value;
      }
      names.set(key, entry);
      events.changed();
    },
  };
}
