// Pods as a watched kind (--autopath): the entry kube-dns adds to the table of kinds. Optional
// (readiness never waits for it: without it every client is unknown and answered as today), and
// forgetful: the source keeps nothing per pod, the index is all the memory 100,000 pods take.

import type { ClusterKind } from '../cluster/kind.ts';
import type { SourceEvent } from '../source/source.ts';
import type { NodeAddresses } from './node-addresses.ts';
import type { PodIndex } from './pod-index.ts';
import { trimPod } from './trim.ts';

export const POD_KIND = 'Pod';

/** The Pod kind, keeping pod addresses in `index` and their nodes' in `nodes`. */
export function podKind(index: PodIndex, nodes: NodeAddresses): ClusterKind {
  return {
    kind: POD_KIND,
    api: '/api/v1',
    resource: 'pods',
    optional: true,
    what: 'Pods (addresses, for autopath)',
    forgetful: {
      relisting: () => {
        index.beginRelist();
        nodes.beginRelist();
      },
      relisted: () => {
        index.endRelist();
        nodes.endRelist();
      },
    },
    apply(_store, e: SourceEvent) {
      const pod = trimPod(e.object);
      if (pod === null) return;
      if (e.type !== 'delete') nodes.add(pod.node);
      if (e.type !== 'delete' && pod.indexed) index.set(pod.ip, pod.namespace, pod.owner, pod.eligible);
      else index.remove(pod.ip, pod.owner);
    },
  };
}
