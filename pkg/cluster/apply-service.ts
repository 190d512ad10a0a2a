// Services into the store: one ServiceInfo per `namespace/name`.

import type { SourceEvent } from '../source/source.ts';
import type { StoreState } from './kind.ts';
import { objectKey } from './kind.ts';
import { trimService } from './trim-service.ts';

export function applyService(store: StoreState, e: SourceEvent): void {
  const key = objectKey(e);
  if (e.type === 'delete') {
    if (store.services.delete(key)) store.touch(key);
    return;
  }
  const { value, problems } = trimService(e.object);
  store.report('Service', problems);
  // An unusable update removes what the old version published rather than serving stale data.
  if (value) store.services.set(key, value);
  else store.services.delete(key);
  store.touch(key);
}
