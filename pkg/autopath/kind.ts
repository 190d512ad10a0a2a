// Pods as a watched kind (--autopath): the entry kube-dns adds to the table of kinds. Optional
// (readiness never waits for it: without it every client is unknown and answered as today), and
// forgetful: the source keeps nothing per pod, the index is all the memory 100,000 pods take.

import type { ClusterKind } from '../cluster/kind.ts';
import type { SourceEvent } from '../source/source.ts';
import type { NodeAddresses } from './node-addresses.ts';
import type { PodIndex } from './pod-index.ts';
import { NODE_SENDER_FIELDS, nodeSenderAddresses } from './trim-node.ts';
import { POD_FIELDS, trimPod } from './trim.ts';

export const POD_KIND = 'Pod';

/**
 * The Pod kind, keeping pod addresses in `index` and their nodes' in `nodes`. `changed` hears of an
 * address (ipv4Number) whose namespace, or whose trust as a node, may differ now; null: any address's
 * (a relist's end).
 */
export function podKind(index: PodIndex, nodes: NodeAddresses, changed: (ip: number | null) => void = () => undefined): ClusterKind {
  return {
    kind: POD_KIND,
    api: '/api/v1',
    resource: 'pods',
    optional: true,
    what: 'Pods (addresses, for autopath)',
    protobuf: POD_FIELDS,
    forgetful: {
      relisting: () => {
        index.beginRelist();
        nodes.beginRelist();
      },
      relisted: () => {
        index.endRelist();
        nodes.endRelist();
        changed(null);
      },
    },
    apply(_store, e: SourceEvent) {
      const pod = trimPod(e.object);
      if (pod === null) return;
      const namespace = index.namespaceNumberOf(pod.ip);
      if (e.type !== 'delete') {
        const known = nodes.has(pod.node);
        nodes.add(pod.node);
        if (!known && nodes.has(pod.node)) changed(pod.node);
      }
      if (e.type !== 'delete' && pod.indexed) index.set(pod.ip, pod.namespace, pod.owner, pod.eligible);
      else index.remove(pod.ip, pod.owner);
      if (index.namespaceNumberOf(pod.ip) !== namespace) changed(pod.ip);
    },
  };
}

/**
 * `node` (the table's Node kind) feeding `nodes` too: the addresses node-cache's queries come from.
 * `changed` hears of each address whose trust the event changed.
 */
export function nodeKind(node: ClusterKind, nodes: NodeAddresses, changed: (ip: number) => void = () => undefined): ClusterKind {
  return {
    ...node,
    protobuf: NODE_SENDER_FIELDS,
    apply(store, e: SourceEvent) {
      node.apply(store, e);
      const name = e.object.metadata.name;
      const ips = e.type === 'delete' ? [] : nodeSenderAddresses(e.object);
      const touched = [...nodes.addressesOf(name), ...ips];
      const trusted = touched.map((ip) => nodes.has(ip));
      nodes.setNode(name, ips);
      touched.forEach((ip, i) => {
        if (nodes.has(ip) !== trusted[i]) changed(ip);
      });
    },
  };
}
