// Nodes: only the topology labels of labelled ones, for federation answers.

import type { SourceEvent } from '../source/source.ts';
import type { StoreState } from './kind.ts';
import { trimNode } from './trim-node.ts';

export function applyNode(store: StoreState, e: SourceEvent): void {
  const name = e.object.metadata.name;
  if (e.type === 'delete') {
    store.nodes.delete(name);
    return;
  }
  const { value, problems } = trimNode(e.object);
  store.report('Node', problems);
  if (value) store.nodes.set(name, value);
  else store.nodes.delete(name);
}
