// The nodes' addresses: the senders besides loopback whose EDNS Client Subnet names the asker.
// node-cache runs on the host's network and asks kube-dns with each pod's address in the Client
// Subnet, from whichever address the node's traffic leaves by: its own (every pod's status.hostIP, as
// the Pod watch sees them) or, masqueraded by kube-proxy on its way to a ClusterIP, its CNI gateway or
// overlay device (from the Node watch: trim-node.ts). A pod's own address is never trusted, even where
// a node's range puts one on a gateway's address, so no pod can speak for another. (A pod on the host's
// network shares its node's addresses, and with them that trust: it could already see the node's traffic.)

import { isLoopback } from '../dns/ip.ts';
import { ipv4OfAddress } from './pod-index.ts';

/** Addresses kept at most: a cluster's nodes (5,000 at Kubernetes' limits) several times over. */
const MAX_NODES = 65_536;

export class NodeAddresses {
  /** From pods' hostIP; replaced at each relist of Pods. */
  private known = new Set<number>();
  /** While relisting: what the list has shown so far, to replace `known` at its end. */
  private listed: Set<number> | null = null;
  /** From Node objects: node name → its addresses, and each address → how many nodes name it. */
  private readonly ofNode = new Map<string, readonly number[]>();
  private readonly nodeRefs = new Map<number, number>();
  private readonly isPod: (ip: number) => boolean;

  /** `isPod`: whether a pod has the address (the pod index), never trusted whatever a node says. */
  constructor(isPod: (ip: number) => boolean = () => false) {
    this.isPod = isPod;
  }

  get size(): number {
    return this.known.size + this.nodeRefs.size;
  }

  /** A node address (ipv4Number) seen on a pod. */
  add(ip: number): void {
    if (ip <= 0) return;
    if (this.known.size < MAX_NODES) this.known.add(ip);
    if (this.listed !== null && this.listed.size < MAX_NODES) this.listed.add(ip);
  }

  /** The addresses of the Node `name` now (empty: it is gone). */
  setNode(name: string, ips: readonly number[]): void {
    for (const ip of this.ofNode.get(name) ?? []) {
      const n = this.nodeRefs.get(ip)! - 1;
      if (n === 0) this.nodeRefs.delete(ip);
      else this.nodeRefs.set(ip, n);
    }
    this.ofNode.delete(name);
    if (ips.length === 0 || this.nodeRefs.size >= MAX_NODES) return;
    this.ofNode.set(name, ips);
    for (const ip of ips) this.nodeRefs.set(ip, (this.nodeRefs.get(ip) ?? 0) + 1);
  }

  /** The addresses the Node `name` was last seen with. */
  addressesOf(name: string): readonly number[] {
    return this.ofNode.get(name) ?? [];
  }

  has(ip: number): boolean {
    return (this.known.has(ip) || this.nodeRefs.has(ip)) && !this.isPod(ip);
  }

  /** A relist starts: the nodes it shows replace the known ones at its end (a node gone is forgotten then). */
  beginRelist(): void {
    this.listed ??= new Set();
  }

  endRelist(): void {
    if (this.listed === null) return;
    this.known = this.listed;
    this.listed = null;
  }

  /** Whether `address` may name its asker in a Client Subnet: loopback (the pod's dnscache) or a node (node-cache). */
  readonly trusts = (address: string): boolean => isLoopback(address) || this.has(ipv4OfAddress(address));
}
