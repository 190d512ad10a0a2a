// The lame duck of `kube-dns -conf` (the coredns Deployment, whose probes are not ours: readiness every
// 10 s, unready after 3 failures). Each UDP flow to the Service is pinned by conntrack to one pod, and
// kube-proxy deletes those entries only for an endpoint that is no longer `serving` (its readiness). A
// pod that exits while still serving loses every pinned client's queries from its exit to kube-proxy's
// next sync: what CoreDNS's fixed `lameduck 5s` does under kubeadm's probe. So the lame duck lasts
// `lameduck` and then until every EndpointSlice endpoint at one of this pod's addresses is no longer
// serving (or gone), plus kube-proxy's sync; never past the pod's deletion deadline, less a margin
// for the drain that follows.

import { networkInterfaces } from 'node:os';
import type { Logger } from '../log/log.ts';
import type { KubeObject } from '../source/source.ts';

export interface LeaveServiceOptions {
  /** This pod's addresses. */
  addresses: ReadonlySet<string>;
  /** The services (`namespace/name`) with an endpoint at one of `addresses`, as last watched. */
  services: () => string[];
  /** One GET of an API collection path (with query). */
  list: (path: string) => Promise<KubeObject[]>;
  log: Logger;
  /** How often the slices are read. */
  pollMs?: number;
  /** Waited once out of every Service: kube-proxy's rate-limited sync (its minSyncPeriod is 1 s); 1.5 s unsaid. */
  settleMs?: number;
  /** The pod's deletion deadline when the API gives none: this long after the call. */
  fallbackMs?: number;
  /**
   * Left before the deletion deadline for the drain (the kubelet's SIGKILL comes at it, or later: the
   * timestamp is in whole seconds, cut down); 750 ms unsaid.
   */
  marginMs?: number;
}

/** Why the wait ended: the log line's. */
export type LeftBecause = 'in no Service' | 'out of every Service' | 'deletion deadline';

/** The addresses of this host's (pod's) interfaces, loopback aside. */
export function ownAddresses(): Set<string> {
  return new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => !i.internal).map((i) => i.address)));
}

interface Endpoint {
  addresses?: string[];
  conditions?: { ready?: boolean; serving?: boolean };
  targetRef?: { kind?: string; name?: string; namespace?: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Resolves when the cluster has taken this pod out of its Services (see above), or at the deadline. */
export async function untilOutOfService(o: LeaveServiceOptions): Promise<LeftBecause> {
  const start = Date.now();
  const services = o.services();
  if (services.length === 0) return 'in no Service';
  let deadline = start + (o.fallbackMs ?? 28_000);
  let deadlineRead = false;
  while (Date.now() < deadline) {
    const mine = await endpointsAt(o, services);
    if (mine !== null) {
      if (!deadlineRead) {
        deadlineRead = true;
        deadline = Math.min(deadline, (await deletionDeadline(o, mine)) ?? deadline);
      }
      // An absent serving condition is the ready one (the API's rule for old writers).
      if (mine.every((e) => (e.conditions?.serving ?? e.conditions?.ready) === false)) {
        await sleep(Math.min(o.settleMs ?? 1500, deadline - Date.now()));
        return 'out of every Service';
      }
    }
    await sleep(Math.min(o.pollMs ?? 500, deadline - Date.now()));
  }
  return 'deletion deadline';
}

/** The endpoints at this pod's addresses in `services`' slices; null when a read failed (asked again next time). */
async function endpointsAt(o: LeaveServiceOptions, services: string[]): Promise<Endpoint[] | null> {
  try {
    const found: Endpoint[] = [];
    for (const key of services) {
      const [namespace, name] = key.split('/');
      const slices = await o.list(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${name}`)}`);
      for (const slice of slices) {
        for (const e of ((slice as { endpoints?: Endpoint[] }).endpoints ?? [])) if ((e.addresses ?? []).some((a) => o.addresses.has(a))) found.push(e);
      }
    }
    return found;
  } catch (err) {
    o.log.debug(1, 'lame duck: reading the EndpointSlices failed, asking again', { err });
    return null;
  }
}

/** The pod's deletionTimestamp less the margin (its endpoints' targetRef names it); null when unknown. */
async function deletionDeadline(o: LeaveServiceOptions, mine: Endpoint[]): Promise<number | null> {
  const ref = mine.find((e) => e.targetRef?.kind === 'Pod' && e.targetRef.name && e.targetRef.namespace)?.targetRef;
  if (ref === undefined) return null;
  try {
    const [pod] = await o.list(`/api/v1/namespaces/${ref.namespace}/pods?fieldSelector=${encodeURIComponent(`metadata.name=${ref.name}`)}`);
    const at = Date.parse((pod?.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp ?? '');
    return Number.isNaN(at) ? null : at - (o.marginMs ?? 750);
  } catch (err) {
    o.log.debug(1, 'lame duck: reading the pod failed; its deadline is the default', { err });
    return null;
  }
}
