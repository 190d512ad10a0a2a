// A Pod as autopath needs it, trimmed at the door: its IPv4 address, its namespace, who it is,
// whether its resolver walks the kubelet's search list, and its node's address. Never throws, whatever the object holds.

import { asArray, asRecord } from '../cluster/trim-common.ts';
import type { KubeObject } from '../source/source.ts';
import { hash32, ipv4Number } from './pod-index.ts';
import { OBJECT_IDENTITY } from '../source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../source/kubernetes-protobuf.ts';

export interface PodAddress {
  /** ipv4Number of the pod's IPv4 address. */
  ip: number;
  namespace: string;
  /** hash32 of the uid (of namespace/name when the object has none, as in a cluster file). */
  owner: number;
  /**
   * Whether autopath may answer for it. Not when finished, on the host's network (its address is the
   * node's, shared with other namespaces), or with a resolv.conf that is not the kubelet's ClusterFirst
   * one (another dnsPolicy, or dnsConfig searches or options: the walk it does is not the one autopath
   * would answer).
   */
  eligible: boolean;
  /** Whether its address is its own (not on the host's network) and it runs: an asker with a namespace. */
  indexed: boolean;
  /** ipv4Number of its node's address (status.hostIP), or -1. */
  node: number;
}

/** The pod's IPv4 address and whether autopath may answer for it; null without an IPv4 address. */
/**
 * What trimPod reads, in protobuf (core/v1 Pod, PodSpec, PodDNSConfig, PodStatus): of its metadata
 * only who it is, as pods carry many labels and annotations and there are 150,000 of them.
 */
export const POD_FIELDS: ProtoSchema = {
  1: ['metadata', 'message', OBJECT_IDENTITY],
  2: ['spec', 'message', {
    6: ['dnsPolicy', 'string'],
    11: ['hostNetwork', 'bool'],
    26: ['dnsConfig', 'message', { 2: ['searches', 'strings'], 3: ['options', 'messages', {}] }],
  }],
  3: ['status', 'message', { 1: ['phase', 'string'], 5: ['hostIP', 'string'], 6: ['podIP', 'string'], 12: ['podIPs', 'messages', { 1: ['ip', 'string'] }] }],
};

export function trimPod(o: KubeObject): PodAddress | null {
  const spec = asRecord(o.spec) ?? {};
  const status = asRecord(o.status) ?? {};
  const ip = podIPv4(status);
  if (ip < 0) return null;
  const dnsConfig = asRecord(spec.dnsConfig);
  const indexed = spec.hostNetwork !== true && status.phase !== 'Succeeded' && status.phase !== 'Failed';
  const eligible =
    indexed &&
    (spec.dnsPolicy === undefined || spec.dnsPolicy === 'ClusterFirst') &&
    (dnsConfig === null || (asArray(dnsConfig.searches).length === 0 && asArray(dnsConfig.options).length === 0));
  const namespace = o.metadata.namespace ?? 'default';
  const uid = typeof o.metadata.uid === 'string' ? o.metadata.uid : `${namespace}/${o.metadata.name}`;
  const node = typeof status.hostIP === 'string' ? ipv4Number(status.hostIP) : -1;
  return { ip, namespace, owner: hash32(uid), eligible, indexed, node };
}

/** The IPv4 address among status.podIPs (dual-stack) or status.podIP; -1 without one. */
function podIPv4(status: Record<string, unknown>): number {
  for (const entry of asArray(status.podIPs)) {
    const ip = asRecord(entry)?.ip;
    const n = typeof ip === 'string' ? ipv4Number(ip) : -1;
    if (n >= 0) return n;
  }
  return typeof status.podIP === 'string' ? ipv4Number(status.podIP) : -1;
}
