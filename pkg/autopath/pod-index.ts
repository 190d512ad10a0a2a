// Pod IPv4 address → namespace (and whether the pod walks the kubelet's search list), what autopath
// and visibility need about a client, in three typed arrays
// (open addressing, linear probing, backward-shift deletion): 10 bytes a slot at a load between 3/8
// and 3/4, so 13-27 bytes a pod, where a Map of strings would take well over 100.
//
// Each slot also keeps 16 bits of a hash of the pod's uid, so that the delete of an old pod arriving
// after a new pod took its address does not remove the new one (a 1 in 65,536 clash makes the address
// unknown, never wrong). Two pods of different namespaces on one
// address (a reuse seen in the wrong order) make the address ambiguous: unknown, answered as today,
// until a relist settles it.

import { parseIPv4 } from '../dns/ip.ts';

const EMPTY = 0;
/** Value bits: the namespace id (1-based) in the low 24, walks the kubelet's search list in bit 29, the relist mark in bit 30, ambiguity in bit 31. */
const NS_MASK = 0x00ff_ffff;
const WALKS = 0x2000_0000;
const MARK = 0x4000_0000;
const AMBIGUOUS = 0x8000_0000;
const MIN_CAPACITY = 1024;

/** FNV-1a, 32 bits: the pod's identity in a slot. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

// Room for the address ipv4Number parses. Single-threaded, so one is enough.
const quad = new Uint8Array(4);

/** `a.b.c.d` (pkg/dns's strict dotted quad) → a 32-bit number (never 0 for a pod address), or -1. */
export function ipv4Number(ip: string): number {
  return parseIPv4(ip, 0, ip.length, quad, 0) ? ipv4FromBytes(quad) : -1;
}

/** An ipv4Number as `a.b.c.d`. */
export function ipv4Text(ip: number): string {
  return `${ip >>> 24}.${(ip >>> 16) & 0xff}.${(ip >>> 8) & 0xff}.${ip & 0xff}`;
}

/** ipv4Number of a socket's remote address, an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`) included. */
export function ipv4OfAddress(address: string): number {
  return ipv4Number(address.startsWith('::ffff:') ? address.slice(7) : address);
}

/** The ipv4Number of the 4 address bytes at the start of `b` (a Client Subnet's /32), or -1 for 0.0.0.0. */
export function ipv4FromBytes(b: Uint8Array): number {
  return b[0] * 0x100_0000 + ((b[1] << 16) | (b[2] << 8) | b[3]) || -1;
}

/** Where `ip` would sit in a table of `mask + 1` slots, before probing. */
function home(ip: number, mask: number): number {
  return (Math.imul(ip, 0x9e3779b1) >>> 0) & mask;
}

export class PodIndex {
  private keys = new Uint32Array(MIN_CAPACITY);
  private values = new Uint32Array(MIN_CAPACITY);
  private owners = new Uint16Array(MIN_CAPACITY);
  private count = 0;
  private mark = 0;
  private relisting = false;
  private readonly namespaceIds = new Map<string, number>();
  private readonly namespaceNames: string[] = [''];

  get size(): number {
    return this.count;
  }

  /** The memory the index holds (the arrays and the namespace names), for the metric and the README. */
  bytes(): number {
    let names = 0;
    for (const n of this.namespaceNames) names += 40 + n.length;
    return this.keys.byteLength + this.values.byteLength + this.owners.byteLength + names;
  }

  /** Whether a pod (of any namespace, ambiguous ones included) has the address `ip`. */
  has(ip: number): boolean {
    return this.keys[this.find(ip)] === ip;
  }

  /** A number per namespace for the pod at `ip`, the same for every pod of it (1 on), 0: unknown or ambiguous. */
  namespaceNumberOf(ip: number): number {
    const v = this.values[this.find(ip)];
    return v === EMPTY || (v & AMBIGUOUS) !== 0 ? 0 : v & NS_MASK;
  }

  /** The namespace of the pod at `ip` (from ipv4Number), or undefined: unknown or ambiguous. */
  namespaceOf(ip: number): string | undefined {
    const v = this.values[this.find(ip)];
    return v === EMPTY || (v & AMBIGUOUS) !== 0 ? undefined : this.namespaceNames[v & NS_MASK];
  }

  /** As namespaceOf, for a pod whose resolver walks the kubelet's search list (autopath's askers) only. */
  walkerNamespaceOf(ip: number): string | undefined {
    const v = this.values[this.find(ip)];
    return v === EMPTY || (v & (AMBIGUOUS | WALKS)) !== WALKS ? undefined : this.namespaceNames[v & NS_MASK];
  }

  /** The pod `owner` (hash32 of its uid) is at `ip` in `namespace`; `walks`: its resolver walks the kubelet's search list. */
  set(ip: number, namespace: string, ownerHash: number, walks = true): void {
    const ns = this.namespaceId(namespace) | (walks ? WALKS : 0);
    const owner = ownerHash & 0xffff;
    let slot = this.find(ip);
    if (this.keys[slot] === ip) {
      const v = this.values[slot];
      // The first sight of the address in a relist starts it afresh: the list is the whole truth.
      const fresh = (v & MARK) !== this.mark;
      const agrees = (v & AMBIGUOUS) === 0 && (this.owners[slot] === owner || (v & NS_MASK) === (ns & NS_MASK));
      this.values[slot] = (fresh || agrees ? ns : (v & (NS_MASK | WALKS)) | AMBIGUOUS) | this.mark;
      this.owners[slot] = owner;
      return;
    }
    if ((this.count + 1) * 4 > this.keys.length * 3) {
      this.resize(this.keys.length * 2);
      slot = this.find(ip);
    }
    this.keys[slot] = ip;
    this.values[slot] = ns | this.mark;
    this.owners[slot] = owner;
    this.count++;
  }

  /** The pod `ownerHash` left `ip`; a newer pod's entry at the address stays. */
  remove(ip: number, ownerHash: number): void {
    const owner = ownerHash & 0xffff;
    const slot = this.find(ip);
    if (this.keys[slot] !== ip) return;
    if (this.owners[slot] !== owner && (this.values[slot] & AMBIGUOUS) === 0) return;
    this.deleteSlot(slot);
  }

  /**
   * A relist starts: every pod listed is set() again, and endRelist() drops the rest. A relist cut
   * short and started again keeps its mark: what the first attempt set counts as listed, which can
   * keep a stale address, never a wrong one (a new pod there in another namespace makes it ambiguous).
   */
  beginRelist(): void {
    if (this.relisting) return;
    this.relisting = true;
    this.mark ^= MARK;
  }

  endRelist(): void {
    this.relisting = false;
    for (let slot = 0; slot < this.keys.length; ) {
      if (this.keys[slot] !== EMPTY && (this.values[slot] & MARK) !== this.mark) this.deleteSlot(slot);
      else slot++;
    }
  }

  private namespaceId(name: string): number {
    let id = this.namespaceIds.get(name);
    if (id === undefined) {
      id = this.namespaceNames.length;
      this.namespaceNames.push(name);
      this.namespaceIds.set(name, id);
    }
    return id;
  }

  /** The slot holding `ip`, or the empty slot where it would go. */
  private find(ip: number): number {
    const mask = this.keys.length - 1;
    let slot = home(ip, mask);
    while (this.keys[slot] !== EMPTY && this.keys[slot] !== ip) slot = (slot + 1) & mask;
    return slot;
  }

  /** Empties `slot` and moves back the entries after it that probed past it (no tombstones). */
  private deleteSlot(slot: number): void {
    const mask = this.keys.length - 1;
    let hole = slot;
    let next = (hole + 1) & mask;
    while (this.keys[next] !== EMPTY) {
      const h = home(this.keys[next], mask);
      // The entry at `next` may fill the hole when its home is not in (hole, next], cyclically.
      if (hole <= next ? h <= hole || h > next : h <= hole && h > next) {
        this.keys[hole] = this.keys[next];
        this.values[hole] = this.values[next];
        this.owners[hole] = this.owners[next];
        hole = next;
      }
      next = (next + 1) & mask;
    }
    this.keys[hole] = EMPTY;
    this.values[hole] = EMPTY;
    this.owners[hole] = 0;
    this.count--;
  }

  private resize(capacity: number): void {
    const { keys, values, owners } = this;
    this.keys = new Uint32Array(capacity);
    this.values = new Uint32Array(capacity);
    this.owners = new Uint16Array(capacity);
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] === EMPTY) continue;
      const slot = this.find(keys[i]);
      this.keys[slot] = keys[i];
      this.values[slot] = values[i];
      this.owners[slot] = owners[i];
    }
  }
}
