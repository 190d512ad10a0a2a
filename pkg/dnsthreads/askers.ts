// A thread's copy of the owner's cache partition (DnsThreads.partitionCache), learned one asker at a
// time: the owner's state behind it (kube-dns: which namespace a pod address is in) stays with the
// owner. A thread first sends an unknown asker's misses with no partition (their answers are not
// kept), learns the asker's partition from the owner's reply, and from then on keeps and finds its
// answers under it. The owner tells every thread when an asker's partition may have changed; until
// then a thread's copy is the owner's.
//
// The partition may depend on the asker's address and on whether the query carries a Client Subnet,
// nothing else of it: one copy is kept for each.

import type { CachePartition } from '../dns/server.ts';

/** Askers kept at most for each of the two kinds; a full copy starts again empty. */
const MAX_ASKERS = 65_536;

export class AskerPartitions {
  private readonly plain = new Map<string, number>();
  private readonly withSubnet = new Map<string, number>();
  /** The owner's count of changes as this thread last heard it (forget()). */
  private epoch: number;

  constructor(epoch: number) {
    this.epoch = epoch;
  }

  /** The DnsServer's partition: the learned one, or -1 (its answers not kept) for an asker not learned. */
  readonly of: CachePartition = (address, view) => (view.ecsFamily === 0 ? this.plain : this.withSubnet).get(address) ?? -1;

  /**
   * The owner's reply: `address`'s partition, read by the owner at its `epoch`. Kept only if no change
   * was heard of since (a reply posted after a change it predates would bring back what changed).
   */
  learn(address: string, withSubnet: boolean, partition: number, epoch: number): void {
    if (epoch !== this.epoch) return;
    const askers = withSubnet ? this.withSubnet : this.plain;
    if (askers.size >= MAX_ASKERS) askers.clear();
    askers.set(address, partition);
  }

  /**
   * The owner's change number `epoch`: `address` (an IPv4 address, also as an IPv4-mapped IPv6 asker)
   * may be in another partition now; null: any asker. True when this thread had learned it.
   */
  forget(address: string | null, epoch: number): boolean {
    this.epoch = epoch;
    if (address === null) {
      const had = this.plain.size + this.withSubnet.size > 0;
      this.plain.clear();
      this.withSubnet.clear();
      return had;
    }
    let had = false;
    for (const a of [address, `::ffff:${address}`]) {
      if (this.plain.delete(a)) had = true;
      if (this.withSubnet.delete(a)) had = true;
    }
    return had;
  }
}
