// serve-stale's store (stale.ts): the last good reply to each question, kept without a JS object per
// reply. Kept as objects (a Buffer, its TTL offsets and times, in an LRU), 10,000 replies are tens of
// thousands of objects that each new one is promoted through and every full GC marks again: under a
// flood of names asked once, node-cache's hits' p99 went 3.3 → 19.7 ms with its default serve-stale
// against none (bench:fair, 16 cores). Here a reply is a record in one ring of bytes, the oldest
// overwritten first, found through an open-addressed table of positions; nothing is allocated to keep
// one, and a hit allocates only its copy (its TTLs rewritten there from the offsets in the ring).
//
// A record: when it was kept and until when it may be given (ms), its TTL (s), the key's and the
// reply's lengths, the number of TTL offsets, the offsets, the key (latin1), the reply. (The keys'
// hashes are the table's; a record is found only through it, never by walking the ring.)

import { readTtl, writeTtl } from '../dns/walk.ts';

/** Bytes before a record's offsets: keptAt 8, until 8, ttl 4, key length 2, reply length 2, offsets 2. */
const HEADER = 26;
const AT = { keptAt: 0, until: 8, ttl: 16, keyLength: 20, wireLength: 22, offsets: 24 } as const;
/** Bytes of the ring a kept question is counted at (a reply of a few records, its key and offsets). */
const BYTES_PER_REPLY = 256;
/** A table at most this full (live and dead slots); past it, the dead are dropped. */
const MAX_LOAD = 0.5;

/** copy()'s unsaid TTL: each record's own, less the whole seconds the reply has been kept (not under 0). */
export const AGED = -1;

/** FNV-1a over a string's char codes, never 0. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0 || 1;
}

export class ReplyRing {
  private readonly capacity: number;
  private readonly slotCount: number;
  // Allocated at the first keep(): a store never used costs nothing.
  private bytes: Buffer | null = null;
  private view: DataView | null = null;
  /** Per slot: the record's absolute position + 1 (0: empty), and the key's hash. */
  private positions: Float64Array | null = null;
  private hashes: Uint32Array | null = null;
  private sparePositions: Float64Array | null = null;
  private spareHashes: Uint32Array | null = null;
  private used = 0;
  /** Bytes written since the start: a record at absolute p is intact while p >= head - capacity. */
  private head = 0;
  /** Records before this absolute position are given up (the table was full of live ones). */
  private floor = 0;

  /** A ring for about `replies` replies of a few records each (BYTES_PER_REPLY, the oldest given up first). */
  static forReplies(replies: number): ReplyRing {
    return new ReplyRing(replies * BYTES_PER_REPLY, replies);
  }

  /** `capacityBytes` of records at most; `entries`, about how many the table is sized for. */
  constructor(capacityBytes: number, entries: number) {
    this.capacity = Math.max(4096, Math.floor(capacityBytes));
    let slots = 64;
    while (slots < entries / MAX_LOAD) slots *= 2;
    this.slotCount = slots;
  }

  /** Keeps `wire` for `key` (replacing what it held) from `nowMs` until `untilMs`; a reply too big for the ring, or a key not latin1, is not kept. */
  keep(key: string, wire: Uint8Array, ttlOffsets: readonly number[], ttl: number, nowMs: number, untilMs: number): void {
    const length = (HEADER + 2 * ttlOffsets.length + key.length + wire.length + 3) & ~3;
    if (length > this.capacity / 4 || key.length > 0xffff || ttlOffsets.length > 0xffff) return;
    for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0xff) return;
    if (this.bytes === null) this.allocate();
    const h = hashOf(key);
    const at = this.reserve(length);
    this.write(at, key, wire, ttlOffsets, ttl, nowMs, untilMs);
    const slot = this.slotOf(key, h, nowMs);
    if (slot >= 0) {
      this.positions![slot] = at + 1;
      return;
    }
    // Full: the dead dropped, then as long as that is not enough, the older half of what is left.
    while (this.used + 1 > this.slotCount * MAX_LOAD) {
      this.dropDead(nowMs);
      const oldest = Math.max(this.floor, this.head - this.capacity);
      if (this.used + 1 > this.slotCount * MAX_LOAD) this.floor = (oldest + this.head) / 2;
    }
    let i = h & (this.slotCount - 1);
    while (this.positions![i] !== 0) i = (i + 1) & (this.slotCount - 1);
    this.positions![i] = at + 1;
    this.hashes![i] = h;
    this.used++;
  }

  /** Seconds the reply last copied had left of its own TTL (0 or less: expired, given stale). */
  leftS = 0;

  /**
   * A copy of the reply kept for `key` and still to be given at `nowMs`, or null; every TTL in it
   * `ttl`, or with AGED its own less the whole seconds it has been kept; `expiredTtl` instead once
   * its own TTL has run out (serve-stale's immediate answer: one lookup whichever it is). Sets leftS.
   */
  copy(key: string, nowMs: number, ttl = AGED, expiredTtl = ttl): Buffer | null {
    if (this.bytes === null) return null;
    const slot = this.slotOf(key, hashOf(key), nowMs);
    if (slot < 0) return null;
    const p = (this.positions![slot] - 1) % this.capacity;
    const v = this.view!;
    const offsets = v.getUint16(p + AT.offsets);
    const wireStart = p + HEADER + 2 * offsets + v.getUint16(p + AT.keyLength);
    const out = Buffer.allocUnsafe(v.getUint16(p + AT.wireLength));
    this.bytes.copy(out, 0, wireStart, wireStart + out.length);
    const age = Math.floor((nowMs - v.getFloat64(p + AT.keptAt)) / 1000);
    this.leftS = v.getUint32(p + AT.ttl) - age;
    const set = this.leftS > 0 ? ttl : expiredTtl;
    for (let i = 0; i < offsets; i++) {
      const off = v.getUint16(p + HEADER + 2 * i);
      writeTtl(out, off, set === AGED ? Math.max(0, readTtl(out, off) - age) : set);
    }
    return out;
  }

  /** Gives up every record kept so far. */
  clear(): void {
    if (this.positions === null) return;
    this.positions.fill(0);
    this.used = 0;
    this.floor = this.head;
  }

  private allocate(): void {
    this.bytes = Buffer.allocUnsafeSlow(this.capacity);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.capacity);
    this.positions = new Float64Array(this.slotCount);
    this.hashes = new Uint32Array(this.slotCount);
  }

  /** The absolute position of `length` contiguous bytes at the head; the ring's end is skipped when it cannot hold them. */
  private reserve(length: number): number {
    const offset = this.head % this.capacity;
    if (offset + length > this.capacity) this.head += this.capacity - offset;
    const at = this.head;
    this.head += length;
    return at;
  }

  private write(at: number, key: string, wire: Uint8Array, ttlOffsets: readonly number[], ttl: number, nowMs: number, untilMs: number): void {
    const p = at % this.capacity;
    const v = this.view!;
    v.setFloat64(p + AT.keptAt, nowMs);
    v.setFloat64(p + AT.until, untilMs);
    v.setUint32(p + AT.ttl, ttl);
    v.setUint16(p + AT.keyLength, key.length);
    v.setUint16(p + AT.wireLength, wire.length);
    v.setUint16(p + AT.offsets, ttlOffsets.length);
    let q = p + HEADER;
    for (const o of ttlOffsets) {
      v.setUint16(q, o);
      q += 2;
    }
    const b = this.bytes!;
    for (let i = 0; i < key.length; i++) b[q++] = key.charCodeAt(i);
    b.set(wire, q);
  }

  /** Whether the record at absolute `at` is still in the ring and to be given at `nowMs`. */
  private live(at: number, nowMs: number): boolean {
    return at >= this.head - this.capacity && at >= this.floor && this.view!.getFloat64((at % this.capacity) + AT.until) > nowMs;
  }

  /** The slot holding `key`'s live record, or -1. Dead slots are passed over (they keep probe chains whole). */
  private slotOf(key: string, h: number, nowMs: number): number {
    const mask = this.slotCount - 1;
    for (let i = h & mask; this.positions![i] !== 0; i = (i + 1) & mask) {
      if (this.hashes![i] !== h) continue;
      const at = this.positions![i] - 1;
      if (this.live(at, nowMs) && this.keyAt(at % this.capacity, key)) return i;
    }
    return -1;
  }

  private keyAt(p: number, key: string): boolean {
    const v = this.view!;
    if (v.getUint16(p + AT.keyLength) !== key.length) return false;
    const b = this.bytes!;
    const start = p + HEADER + 2 * v.getUint16(p + AT.offsets);
    for (let i = 0; i < key.length; i++) if (b[start + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  /** The table again with the live records only (a key's older records were already replaced in place), through a second table kept for it. */
  private dropDead(nowMs: number): void {
    const [positions, hashes] = [this.positions!, this.hashes!];
    this.sparePositions ??= new Float64Array(this.slotCount);
    this.spareHashes ??= new Uint32Array(this.slotCount);
    const [to, toHashes] = [this.sparePositions, this.spareHashes];
    to.fill(0);
    const mask = this.slotCount - 1;
    let used = 0;
    for (let s = 0; s < this.slotCount; s++) {
      if (positions[s] === 0 || !this.live(positions[s] - 1, nowMs)) continue;
      let i = hashes[s] & mask;
      while (to[i] !== 0) i = (i + 1) & mask;
      to[i] = positions[s];
      toHashes[i] = hashes[s];
      used++;
    }
    [this.positions, this.hashes, this.sparePositions, this.spareHashes] = [to, toHashes, positions, hashes];
    this.used = used;
  }
}
