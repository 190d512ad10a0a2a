// EndpointSlices and core/v1 Endpoints into the store: each object's endpoint sets, filed under the
// service they belong to (which may change from one version of the object to the next).

import type { SourceEvent } from '../source/source.ts';
import type { EndpointSetInfo } from './model.ts';
import type { StoreState } from './kind.ts';
import { objectKey } from './kind.ts';
import { trimEndpointSlice, trimEndpoints } from './trim-endpoints.ts';

export function applyEndpointSlice(store: StoreState, e: SourceEvent): void {
  applySlice(store, e, false);
}

/** An EndpointSlice whose endpoints without a hostname take their pod's name (CoreDNS's endpoint_pod_names). */
export function applyEndpointSliceNamedByPod(store: StoreState, e: SourceEvent): void {
  applySlice(store, e, true);
}

function applySlice(store: StoreState, e: SourceEvent, podNames: boolean): void {
  apply(store, e, () => {
    const { value, problems } = trimEndpointSlice(e.object, podNames);
    store.report(e.kind, problems);
    return value ? [value] : [];
  });
}

export function applyEndpoints(store: StoreState, e: SourceEvent): void {
  apply(store, e, () => {
    const { value, problems } = trimEndpoints(e.object);
    store.report(e.kind, problems);
    return value ?? [];
  });
}

function apply(store: StoreState, e: SourceEvent, trim: () => EndpointSetInfo[]): void {
  const owner = `${e.kind}/${objectKey(e)}`;
  drop(store, owner);
  if (e.type === 'delete') return;
  const sets = trim();
  if (sets.length === 0) return;
  const service = `${sets[0].namespace}/${sets[0].service}`;
  const ids = new Set(sets.map((s) => s.id));
  const others = (store.endpoints.get(service) ?? []).filter((s) => !ids.has(s.id));
  store.endpoints.set(service, [...others, ...sets]);
  store.endpointOwners.set(owner, { service, ids: sets.map((s) => s.id) });
  store.touch(service);
}

/** Removes what the endpoint object `owner` fed before. */
function drop(store: StoreState, owner: string): void {
  const fed = store.endpointOwners.get(owner);
  if (!fed) return;
  store.endpointOwners.delete(owner);
  const left = store.endpoints.get(fed.service)?.filter((s) => !fed.ids.includes(s.id)) ?? [];
  if (left.length > 0) store.endpoints.set(fed.service, left);
  else store.endpoints.delete(fed.service);
  store.touch(fed.service);
}
