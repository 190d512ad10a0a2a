// Node → the IPv4 addresses its own traffic can come from when it reaches kube-dns. node-cache runs on
// the host's network, and kube-proxy masquerades the host's traffic to a ClusterIP to the address of
// the interface it leaves by: the node's InternalIP (or ExternalIP) toward another node's network, the
// CNI bridge's gateway (the pod range's first address, cni0/cbr0) toward a pod on the same node, the
// overlay's address toward a pod elsewhere (flannel's VXLAN device holds the range's network address;
// Calico's and Cilium's tunnel and host devices are named in the node's annotations).

import { asArray, asRecord } from '../cluster/trim-common.ts';
import type { KubeObject } from '../source/source.ts';
import { ipv4Number } from './pod-index.ts';
import { OBJECT_META } from '../source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../source/kubernetes-protobuf.ts';

const ADDRESS_TYPES = new Set(['InternalIP', 'ExternalIP']);

/** Annotations CNIs put the address of a node's own tunnel or host device in. */
const DEVICE_ANNOTATIONS = [
  'projectcalico.org/IPv4VXLANTunnelAddr',
  'projectcalico.org/IPv4IPIPTunnelAddr',
  'projectcalico.org/IPv4WireguardInterfaceAddr',
  'network.cilium.io/ipv4-cilium-host',
];

/** Addresses kept of one node at most (a node object can carry any number). */
const MAX_ADDRESSES = 16;

/** What nodeSenderAddresses and the Node kind's own trim (its labels) read, in protobuf (core/v1 Node, NodeSpec, NodeStatus). */
export const NODE_SENDER_FIELDS: ProtoSchema = {
  1: ['metadata', 'message', OBJECT_META],
  2: ['spec', 'message', { 1: ['podCIDR', 'string'], 7: ['podCIDRs', 'strings'] }],
  3: ['status', 'message', { 5: ['addresses', 'messages', { 1: ['type', 'string'], 2: ['address', 'string'] }] }],
};

/** The node's addresses (ipv4Number), without duplicates; an address that does not parse is skipped. */
export function nodeSenderAddresses(obj: KubeObject): number[] {
  const out: number[] = [];
  const add = (ip: number) => {
    if (ip > 0 && !out.includes(ip) && out.length < MAX_ADDRESSES) out.push(ip);
  };
  const status = asRecord(obj.status);
  for (const a of asArray(status?.addresses)) {
    const address = asRecord(a);
    if (typeof address?.address === 'string' && ADDRESS_TYPES.has(address.type as string)) add(ipv4Number(address.address));
  }
  const spec = asRecord(obj.spec);
  const cidrs = spec?.podCIDRs !== undefined ? asArray(spec.podCIDRs) : [spec?.podCIDR];
  for (const cidr of cidrs) {
    const network = typeof cidr === 'string' ? ipv4Network(cidr) : -1;
    // The network address (an overlay device's, as flannel's) and the first host (the bridge's gateway).
    if (network > 0) for (const ip of [network, network + 1]) add(ip);
  }
  const annotations = asRecord(obj.metadata.annotations);
  for (const key of DEVICE_ANNOTATIONS) {
    const v = annotations?.[key];
    if (typeof v === 'string') add(ipv4Number(v.split('/')[0]));
  }
  return out;
}

/** The network address of an IPv4 CIDR of at most /30, or -1 (IPv6, malformed, too narrow for a gateway). */
function ipv4Network(cidr: string): number {
  const slash = cidr.indexOf('/');
  const bits = Number(cidr.slice(slash + 1));
  const ip = slash > 0 ? ipv4Number(cidr.slice(0, slash)) : -1;
  if (ip <= 0 || !Number.isInteger(bits) || bits < 1 || bits > 30) return -1;
  const hostBits = 2 ** (32 - bits);
  return ip - (ip % hostBits);
}
