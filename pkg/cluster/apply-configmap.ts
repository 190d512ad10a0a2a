// ConfigMaps: passed on to the program (the kube-dns ConfigMap is its configuration), not kept.

import type { SourceEvent } from '../source/source.ts';
import type { StoreState } from './kind.ts';
import { trimConfigMap } from './trim-configmap.ts';

export function applyConfigMap(store: StoreState, e: SourceEvent): void {
  const { name, namespace = 'default' } = e.object.metadata;
  if (e.type === 'delete') {
    store.configMapChanged(null, name, namespace);
    return;
  }
  const { value, problems } = trimConfigMap(e.object);
  store.report('ConfigMap', problems);
  store.configMapChanged(value, name, namespace);
}
