// The nodes' addresses, as the Pod watch sees them (every pod's status.hostIP): the senders besides
// loopback whose EDNS Client Subnet names the asker. node-cache runs on the host's network and asks
// kube-dns from its node's address with each pod's address in the Client Subnet; a pod's own address
// is never one of these, so no pod can speak for another. (A pod on the host's network shares its
// node's address, and with it that trust: it could already see the node's traffic.)

import { isLoopback } from '../dns/ip.ts';
import { ipv4OfAddress } from './pod-index.ts';

/** Addresses kept at most: a cluster's nodes (5,000 at Kubernetes' limits), with room to spare. */
const MAX_NODES = 65_536;

export class NodeAddresses {
  private known = new Set<number>();
  /** While relisting: what the list has shown so far, to replace `known` at its end. */
  private listed: Set<number> | null = null;

  get size(): number {
    return this.known.size;
  }

  /** A node address (ipv4Number) seen on a pod. */
  add(ip: number): void {
    if (ip <= 0) return;
    if (this.known.size < MAX_NODES) this.known.add(ip);
    if (this.listed !== null && this.listed.size < MAX_NODES) this.listed.add(ip);
  }

  has(ip: number): boolean {
    return this.known.has(ip);
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
  readonly trusts = (address: string): boolean => isLoopback(address) || this.known.has(ipv4OfAddress(address));
}
