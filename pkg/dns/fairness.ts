// Fair shares of what a miss costs, by asker, while it is scarce: a flooding or crash-looping client
// must not take the answering thread from every other (issue 26). A cache hit is never limited.
//
// Every window (100 ms) reads how busy the thread was (its event loop's utilisation). While it is
// under `busyAt`, every miss is admitted. Once it reaches it, misses are shared: each asker misses at
// most `share` a window, the max-min fair level of what the thread can take (the window's admitted
// misses scaled by how far the utilisation was from `busyAt`: too busy, less; room left, more) over
// what each asked, so an asker asking less than its share keeps all of it; never under the floor,
// which each asker keeps a second however its misses fall into windows. After a window with room,
// a share binds only the limited and those asking twice it.
// An asker alone is shared with nobody, unless the port's receive queue backs up (udp-backlog.ts; read
// at each window's end, and glanced at within a window after a busy one: GLANCES):
// a flood that fills it would leave no room for the packets of whoever comes next; nor are askers
// alike (none asking twice another's) who would be cut, unless it backs up PRESSED_WINDOWS running:
// nobody asks more than the others. A fresh thread takes no share from its first WARM_WINDOWS
// windows in which more than one asker missed. With `slots`,
// misses waiting on an upstream are shared the same way once that many are in flight, or fewer while
// the upstream's answers queue (`slotLimit`: one asker's pipelined flood, forwarded whole, left
// everyone else's misses waiting behind it at the upstream, however idle this thread). What exceeds
// a share is dropped before the query is parsed beyond its question. Sharing ends after a second
// with nothing dropped.
//
// An asker is the packet's source address, or the EDNS Client Subnet's address when the source is
// one of ours that puts it there (a pod's dnscache on loopback, node-cache): `trustsSubnetOf`.

import { performance } from 'node:perf_hooks';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { formatIPv4, formatIPv6 } from './ip.ts';
import type { OptView } from './question.ts';
import type { Transport } from './responder.ts';
import { udpBacklog } from './udp-backlog.ts';
import type { FlowSteering } from './udp-steer.ts';
import type { UdpBacklog } from './udp-backlog.ts';

export interface FairnessOptions {
  /** The thread's busy fraction from which misses are shared. Default 0.9. */
  busyAt?: number;
  /** Misses a second every asker keeps while they are shared. Default 200. */
  floorPerSecond?: number;
  /** Misses in flight (an upstream's answers awaited) from which they are shared too; 0: never. Default 0. */
  slots?: number;
  /** Whether a packet from `address` names its asker in its Client Subnet (our own caches do). Default: never. */
  trustsSubnetOf?: (address: string) => boolean;
  /** An asker started (true) or stopped (false) being limited. */
  onLimited?: (asker: Asker, limited: boolean) => void;
  /** Window length in ms. Default 100. */
  windowMs?: number;
  /** The busy fraction since the last call (tests). Default: the event loop's utilisation. */
  busy?: () => number;
  /** Milliseconds, for pacing a share over its window (tests). Default performance.now. */
  now?: () => number;
  /** The UDP backlog of a port (tests). Default: the kernel's (udp-backlog.ts). */
  backlog?: (port: number) => UdpBacklog | null;
}

/** One asker's counts. */
export class Asker {
  readonly address: string;
  /** Misses asked this window, and admitted. */
  asked = 0;
  admitted = 0;
  /** Misses awaiting an answer now. */
  inflight = 0;
  /** Dropped this window, since it was last limited, and in all. */
  droppedInWindow = 0;
  droppedNow = 0;
  dropped = 0;
  /** Windows in a row without a drop (a second of them: no longer limited), and without a miss (forgotten). */
  calmWindows = 0;
  idleWindows = 0;
  limited = false;
  /** The floor's misses left (a second's at most), and when they were last topped up (ms). */
  floorLeft: number;
  floorAt: number;

  constructor(address: string, floorPerSecond: number, now: number) {
    this.address = address;
    this.floorLeft = floorPerSecond;
    this.floorAt = now;
  }
}

export interface FairnessStats {
  /** Misses dropped for exceeding a share. */
  dropped: number;
  /** Windows spent sharing. */
  sharedWindows: number;
}

/** A Client Subnet's address, whole (one thread reads one at a time: no allocation a miss). */
const ecsAddress = new Uint8Array(16);

/** Askers tracked at most; further ones share one entry (a spoofed flood must not grow memory). */
const MAX_ASKERS = 10_000;
const OVERFLOW = '*';
/** Windows without a drop before sharing ends, or before an asker is no longer limited. */
const CALM_WINDOWS = 10;
/** A busy fraction at which the thread is taken to have more work than time. */
const SATURATED = 0.99;
/**
 * Windows in which more than one asker missed that a fresh thread takes no share from: its first
 * misses run uncompiled, up to 2.5 times the CPU of a warm one, so a load it will take at 78 % busy
 * reads 100 % busy, its queue backing up, and shares set from those windows cut every asker as they
 * caught up on their rate (1,600 lost of eight askers at 2,500 misses a second in bench:miss-cost).
 * One asker alone is shared from its first window, as before, if it fills the queue: a flood's flows
 * read by another thread were not all steered when sharing began later.
 */
export const WARM_WINDOWS = 2;

/**
 * Windows running in which the queue must back up before askers alike are cut. Two were not enough:
 * a window in which the thread was held backs it up, and so does the catch-up after it (1,600 lost
 * of eight askers at 2,500 a second in bench:miss-cost, the share set from the catch-up window); a
 * fresh thread's slow first windows did the same.
 */
export const PRESSED_WINDOWS = 3;

/**
 * Windows of the upstream's fastest answers kept (10 s of 100 ms ones): the best of them is what it
 * answers in without a queue.
 */
const BASELINE_WINDOWS = 100;
/**
 * The upstream's answers queue when a window's fastest took QUEUED_TIMES the best of BASELINE_WINDOWS
 * and QUEUED_MS more, with QUEUED_FROM misses or more in flight, QUEUED_WINDOWS running: the fastest,
 * not a typical one, so that an outside name slower than a cluster one is no sign; running, so that
 * an upstream's pause (a GC) is none either.
 */
const QUEUED_TIMES = 4;
const QUEUED_MS = 2;
const QUEUED_FROM = 16;
export const QUEUED_WINDOWS = 3;
/** While they queue, the misses in flight shared from fall to this part of what is in flight a window; after, they rise by a quarter a window. */
const SLOTS_CUT = 0.7;
const SLOTS_GROWTH = 1.25;

/** A receive queue this long is pressure however large the buffer (see watch()). */
const PRESSURE_BYTES = 256 * 1024;

/**
 * Glances at the watched queues within a window after a busy one, besides its end: a flood's burst
 * backed dnscache's queue up 1.8 MB within one window (bench:fair), every asker waiting behind it
 * until the window's end steered the flood away (udp-steer.ts); a glance steers it within a quarter.
 */
const GLANCES = 3;
/**
 * A read of the watched queues (/proc/net/udp and udp6) that took longer is not made again within a
 * window: the kernel walks its whole UDP table, 0.25 ms at 100 sockets and 2.7 ms at 1,000 (21-27 at
 * 5,000), and node-cache reads the node's own. Three glances of 1 ms are 3% of a 100 ms window.
 */
const GLANCE_READ_MS = 1;

/** The dropped counts' reason for a miss over its asker's share. */
export const LIMITED = 'limited';

function eventLoopBusy(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return u;
  };
}

export class Fairness {
  readonly stats: FairnessStats = { dropped: 0, sharedWindows: 0 };
  /** Sharing now. */
  shared = false;
  /** A window's misses per asker while shared. */
  share = Infinity;
  private readonly askers = new Map<string, Asker>();
  private readonly busyAt: number;
  private readonly floor: number;
  private readonly floorPerSecond: number;
  /** Misses in flight from which they are shared (FairnessOptions.slots; 0: never). */
  readonly slots: number;
  private readonly trusts: (address: string) => boolean;
  private readonly onLimited: FairnessOptions['onLimited'];
  private readonly busy: () => number;
  private readonly timer: NodeJS.Timeout;
  private inflight = 0;
  /** Misses in flight from which they are shared: `slots`, lowered while the upstream's answers queue. */
  private limit: number;
  /** This window's fastest answer awaited (ms), and the last BASELINE_WINDOWS' fastest (a ring). */
  private fastestMs = Infinity;
  private readonly recentFastest = new Float64Array(BASELINE_WINDOWS).fill(Infinity);
  private recentAt = 0;
  /** Windows running in which the upstream's answers queued, counted up to QUEUED_WINDOWS. */
  private queuedWindows = 0;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly backlog: (port: number) => UdpBacklog | null;
  private readonly watched = new Map<number, { threshold: number; drops: number }>();
  /** The watched ports' flow steering (udp-steer.ts): flooding flows moved to queues of their own. */
  private readonly steering: FlowSteering[] = [];
  /** The last window's: a watched queue backing up. */
  private pressure = false;
  /** This window's: a glance saw a watched queue backing up; glances left, and the next one's timer. */
  private pressedEarly = false;
  private glancesLeft = 0;
  private glanceTimer: NodeJS.Timeout | null = null;
  /** What the last read of the watched queues took (ms): GLANCE_READ_MS or more, no glances. */
  private readMs = 0;
  /** This window's: a queue /proc does not show backed up (behind()). */
  private behindNow = false;
  /**
   * The last window was busy past busyAt or its queue backed up: a share binds every asker over it.
   * After a window with room it binds only the limited and those asking twice it: a share set from
   * demands that all fitted cut eight askers catching up on a busier window's delay (338 lost).
   */
  private tight = false;
  /** Windows running in which the queue backed up, counted up to PRESSED_WINDOWS. */
  private pressedWindows = 0;
  /** A watched queue backed up since sharing began: its floods are steered (udp-steer.ts) until sharing ends. */
  private backedUp = false;
  private windowStart: number;
  /** Misses in flight each asker may have once `slots` are: the slots over the askers waiting (at the last window's end). */
  private slotShare = Infinity;
  private admittedInWindow = 0;
  /** Windows in which more than one asker missed, counted up to WARM_WINDOWS. */
  private crowdedWindows = 0;
  private droppedInWindow = 0;
  private calm = 0;

  constructor(o: FairnessOptions = {}) {
    const windowMs = o.windowMs ?? 100;
    this.windowMs = windowMs;
    this.now = o.now ?? (() => performance.now());
    this.backlog = o.backlog ?? udpBacklog;
    this.windowStart = this.now();
    this.busyAt = o.busyAt ?? 0.9;
    this.floorPerSecond = o.floorPerSecond ?? 200;
    this.floor = Math.max(1, Math.round((this.floorPerSecond * windowMs) / 1000));
    this.slots = o.slots ?? 0;
    this.limit = this.slots;
    this.trusts = o.trustsSubnetOf ?? (() => false);
    this.onLimited = o.onLimited;
    this.busy = o.busy ?? eventLoopBusy();
    this.timer = setInterval(() => this.tick(), windowMs);
    this.timer.unref();
  }

  /** Who asks: the Client Subnet's address when `address` is trusted to set it, else `address`. */
  askerOf(req: Uint8Array, address: string, view: OptView): string {
    if (view.ecsFamily === 0 || !this.trusts(address)) return address;
    // The option may carry fewer bytes than the address (the prefix's): the rest are zero.
    ecsAddress.fill(0);
    ecsAddress.set(req.subarray(view.ecsAddressAt, view.ecsAddressAt + view.ecsAddressLength));
    return view.ecsFamily === 1 ? formatIPv4(ecsAddress, 0) : formatIPv6(ecsAddress, 0);
  }

  /**
   * Whether a miss `admit(who)` refused is answered REFUSED rather than dropped: over TCP for a pod a
   * trusted cache named (nothing is sent again over TCP, and a silent drop would hold the cache's
   * query for its whole timeout, as CoreDNS's forward answers over max_concurrent); a client asking
   * for itself gets nothing, whose full window is what slows its flood.
   */
  refuses(transport: Transport, who: string, address: string): boolean {
    return transport === 'tcp' && who !== address;
  }

  /** A miss of `address`: its Asker when admitted (hand it to finished() if it waits), null when dropped. */
  admit(address: string): Asker | null {
    // One clock read a miss: the floor's bucket and the pacing share it.
    const now = this.now();
    let a = this.askers.get(address);
    if (a === undefined) {
      const key = this.askers.size < MAX_ASKERS ? address : OVERFLOW;
      a = this.askers.get(key);
      if (a === undefined) this.askers.set(key, (a = new Asker(key, this.floorPerSecond, now)));
    }
    a.asked++;
    const floor = this.floorKept(a, now);
    if (this.shared && !floor && (this.overShare(a, now) || (this.slots > 0 && this.inflight >= this.limit && a.inflight >= this.slotShare))) {
      this.dropped(a);
      return null;
    }
    if (floor) a.floorLeft--;
    a.admitted++;
    this.admittedInWindow++;
    return a;
  }

  /**
   * Whether `a` has misses of the floor left: it keeps floorPerSecond a second whatever its share,
   * however they fall into windows (a well-behaved client's come in bursts: held to a tenth of the
   * floor each window, one asking 125 a second lost some). Every miss admitted spends one, so the
   * floor does not come on top of a share.
   */
  private floorKept(a: Asker, now: number): boolean {
    a.floorLeft = Math.min(this.floorPerSecond, a.floorLeft + ((now - a.floorAt) * this.floorPerSecond) / 1000);
    a.floorAt = now;
    return a.floorLeft >= 1;
  }

  /**
   * `a`'s admitted miss awaits an answer (started: when it began, for finished(); read only where
   * slots are shared) or got one (finished).
   */
  started(a: Asker): number {
    a.inflight++;
    this.inflight++;
    return this.slots > 0 ? this.now() : 0;
  }

  finished(a: Asker, since: number): void {
    a.inflight--;
    this.inflight--;
    if (this.slots === 0) return;
    const ms = this.now() - since;
    if (ms < this.fastestMs) this.fastestMs = ms;
  }

  /** Whether `a` is over its share so far into the window, and it binds (see `tight`). */
  private overShare(a: Asker, now: number): boolean {
    return a.admitted >= this.paced(now) && (this.tight || a.limited || a.asked > 2 * this.share);
  }

  /** Until the window ends, when the shares start afresh (a held connection's wait). */
  windowLeftMs(): number {
    return Math.max(0, this.windowStart + this.windowMs - this.now());
  }

  /**
   * The share so far into the window (a tenth of it, or the floor, at its start): spread over the
   * window, so an asker's admitted misses do not all queue at its start ahead of everyone else's.
   */
  private paced(now: number): number {
    if (this.share === Infinity) return Infinity;
    const into = Math.min(1, (now - this.windowStart) / this.windowMs);
    return Math.max(this.floor, this.share * (0.1 + 0.9 * into));
  }

  /**
   * A DnsServer's UDP port, whose receive queue says whether the thread keeps up: a quarter of
   * `bufferBytes` queued, or a datagram dropped for want of room, is pressure (misses shared then,
   * even an asker alone's: its flood would leave no room for anyone who comes). `flows`: the port's
   * steering, told at each window whether the queue backs up, and when an asker is let go.
   */
  watch(port: number, bufferBytes: number, flows?: FlowSteering): void {
    this.watched.set(port, { threshold: Math.min(bufferBytes / 4, PRESSURE_BYTES), drops: this.backlog(port)?.drops ?? 0 });
    if (flows !== undefined) this.steering.push(flows);
  }

  /**
   * A queue of misses for this thread that /proc does not show is backing up (--workers: another
   * thread's misses waiting on this one): pressure at this window's end, as a watched port's. A
   * thread reads its socket as fast as the flood comes and passes every miss on; only here is it
   * seen that this thread does not keep up.
   */
  behind(): void {
    this.behindNow = true;
  }

  /** Flows on queues of their own now, over the watched ports. */
  get steeredFlows(): number {
    let n = 0;
    for (const f of this.steering) n += f.size;
    return n;
  }

  /** Misses in flight from which they are shared now: `slots`, fewer while the upstream's answers queue. */
  get slotLimit(): number {
    return this.limit;
  }

  /** Whether a watched port's queue is backing up (see watch()). */
  private pressed(): boolean {
    let pressed = false;
    const started = this.now();
    for (const [port, w] of this.watched) {
      const b = this.backlog(port);
      if (b === null) continue;
      if (b.queued >= w.threshold || b.drops > w.drops) pressed = true;
      w.drops = b.drops;
    }
    this.readMs = this.now() - started;
    return pressed;
  }

  /** Askers tracked now (at most 10,000 and the one entry the rest share). */
  get askersTracked(): number {
    return this.askers.size;
  }

  /** The askers limited now, most dropped first. */
  limited(): Asker[] {
    return [...this.askers.values()].filter((a) => a.limited).sort((x, y) => y.droppedNow - x.droppedNow);
  }

  close(): void {
    clearInterval(this.timer);
    if (this.glanceTimer !== null) clearTimeout(this.glanceTimer);
  }

  /**
   * A glance within the window (GLANCES): a watched queue backing up is this window's pressure now,
   * and the flows making most of its misses get queues of their own at once.
   */
  private readonly glance = (): void => {
    this.glanceTimer = null;
    if (this.pressed()) {
      this.pressedEarly = true;
      for (const f of this.steering) this.limitSteered(f.steerHeavy());
      return;
    }
    if (--this.glancesLeft > 0) this.glanceTimer = setTimeout(this.glance, this.windowMs / (GLANCES + 1)).unref();
  };

  private dropped(a: Asker): void {
    a.droppedInWindow++;
    a.droppedNow++;
    a.dropped++;
    this.stats.dropped++;
    this.droppedInWindow++;
    this.limitAsker(a);
  }

  private limitAsker(a: Asker): void {
    if (a.limited) return;
    a.limited = true;
    a.calmWindows = 0;
    this.onLimited?.(a, true);
  }

  /**
   * The askers of flows just steered are limited: one steered before any of its misses was dropped
   * (it made most of a backed-up queue's misses) was otherwise held on its small queue, losing its
   * bursts' excess there, unnamed, and kept there until sharing ended, not until it calmed down.
   */
  private limitSteered(addresses: string[]): void {
    for (const address of addresses) {
      const a = this.askers.get(address);
      if (a !== undefined) this.limitAsker(a);
    }
  }

  /** A window's end (the timer's; a test may step it): the busy fraction read, sharing begun or ended, the next share set, idle askers let go. */
  tick(): void {
    const busy = this.busy();
    let waiting = 0;
    for (const a of this.askers.values()) if (a.inflight > 0) waiting++;
    const queued = this.slots > 0 && this.upstreamQueued();
    this.limit = queued ? Math.max(1, Math.floor(Math.min(this.limit, this.inflight) * SLOTS_CUT)) : Math.min(this.slots, Math.ceil(this.limit * SLOTS_GROWTH));
    // Alone in waiting, an asker has nobody to leave slots to: the upstream's own limit answers it;
    // unless the upstream's answers queue: whoever asks next would wait behind all it has in flight.
    this.slotShare = waiting < 2 ? (queued ? this.limit : Infinity) : Math.floor(this.limit / waiting) || 1;
    const slotsFull = this.slots > 0 && this.inflight >= this.limit;
    // A thread with time to spare reads what comes as it comes: its queue cannot be backing up, and
    // /proc/net/udp is not free to read (the kernel walks its whole UDP table).
    this.pressure = this.pressedEarly || (busy >= this.busyAt / 2 && (this.pressed() || this.behindNow));
    this.behindNow = false;
    this.pressedEarly = false;
    this.pressedWindows = this.pressure ? Math.min(PRESSED_WINDOWS, this.pressedWindows + 1) : 0;
    this.tight = busy >= this.busyAt || this.pressure;
    const fresh = this.crowdedWindows < WARM_WINDOWS && this.crowded();
    if (fresh) this.crowdedWindows++;
    if (!this.shared && (slotsFull || (!fresh && (busy >= this.busyAt || this.pressure)))) {
      this.shared = true;
      this.calm = 0;
    }
    if (this.shared) {
      this.stats.sharedWindows++;
      this.calm = this.droppedInWindow === 0 && busy < this.busyAt && !slotsFull && !this.pressure ? this.calm + 1 : 0;
      if (this.calm >= CALM_WINDOWS) this.shared = false;
      this.share = this.shared ? this.nextShare(busy) : Infinity;
    }
    this.backedUp = this.shared && (this.backedUp || this.pressure);
    this.admittedInWindow = 0;
    this.droppedInWindow = 0;
    this.windowStart = this.now();
    this.forgetIdle();
    // Once the counts start afresh: a held TCP connection's frames, taken as it resumes, are the new window's.
    for (const f of this.steering) {
      this.limitSteered(f.window(this.backedUp, busy >= this.busyAt / 2));
      if (!this.shared) f.releaseAll();
    }
    this.glanceWithin(busy);
  }

  /**
   * The next window's glances (a last one still pending is this window's: gone): only for a port with
   * steering, after a busy window (its end read the queues), until it backs up, where a read is cheap.
   */
  private glanceWithin(busy: number): void {
    if (this.glanceTimer !== null) clearTimeout(this.glanceTimer);
    this.glanceTimer = null;
    const glance = this.steering.length > 0 && busy >= this.busyAt / 2 && !this.backedUp && this.readMs < GLANCE_READ_MS;
    this.glancesLeft = glance ? GLANCES : 0;
    if (this.glancesLeft > 0) this.glanceTimer = setTimeout(this.glance, this.windowMs / (GLANCES + 1)).unref();
  }

  /**
   * Whether the upstream's answers have queued QUEUED_WINDOWS running (see QUEUED_TIMES); the
   * window's fastest is kept for the baseline. A window with misses in flight and none answered is
   * taken as queued only after one that was.
   */
  private upstreamQueued(): boolean {
    const fastest = this.fastestMs;
    this.fastestMs = Infinity;
    let queuedNow = this.queuedWindows > 0 && this.inflight >= QUEUED_FROM;
    if (fastest !== Infinity) {
      this.recentFastest[this.recentAt] = fastest;
      this.recentAt = (this.recentAt + 1) % BASELINE_WINDOWS;
      let best = Infinity;
      for (const ms of this.recentFastest) if (ms < best) best = ms;
      queuedNow = this.inflight >= QUEUED_FROM && fastest >= QUEUED_TIMES * best + QUEUED_MS;
    }
    this.queuedWindows = queuedNow ? Math.min(QUEUED_WINDOWS, this.queuedWindows + 1) : 0;
    return this.queuedWindows >= QUEUED_WINDOWS;
  }

  /** Whether more than one asker missed in this window. */
  private crowded(): boolean {
    let missed = 0;
    for (const a of this.askers.values()) if (a.asked > 0 && ++missed > 1) return true;
    return false;
  }

  /**
   * Max-min fair: what the thread can take at busyAt (the window's admitted misses, scaled by how far
   * it was from it) filled up asker by asker, the smallest demand first; the level where it runs out is
   * the share (every asker under it keeps all it asked); where it does not run out, the largest demand
   * and a tenth more, within the room left. Moves at most twofold a window once set.
   */
  private nextShare(busy: number): number {
    // Saturated or falling behind, the utilisation cannot say by how much: take a third off until it can.
    const scale = busy >= SATURATED || this.pressure ? 0.7 : Math.min(2, this.busyAt / Math.max(busy, 0.01));
    const capacity = this.admittedInWindow * scale;
    const demands: number[] = [];
    let limited = false;
    for (const a of this.askers.values()) {
      if (a.asked === 0) continue;
      demands.push(a.asked);
      limited ||= a.limited;
    }
    // Alone (nobody else missed within a second), an asker has nobody to share with, unless it is
    // filling the queue: then whoever comes next could not even be heard. Once limited for that it
    // stays limited while sharing lasts: its queue drained by the limit is no sign that the flood
    // stopped, and letting it all in again refills the queue (sharing went on and off every other
    // window under a bursty flood, and the hits queued behind it: p99 150 ms, 26 ms after).
    if (this.askers.size < 2 && !this.pressure && this.share === Infinity) return Infinity;
    demands.sort((x, y) => x - y);
    let left = capacity;
    let level = Infinity;
    for (let i = 0; i < demands.length; i++) {
      const even = left / (demands.length - i);
      if (demands[i] > even) {
        level = even;
        break;
      }
      left -= demands[i];
    }
    // Askers alike (none asking twice another's), some over the level, none limited yet, the queue
    // not backing up PRESSED_WINDOWS running: nobody asks more than the others, and a window's busy
    // fraction swings (one at 0.91 in a load at 0.7 set a share that cut eight equal askers, and the
    // next window's catch-up cut them again), as does its queue (a window in which the thread was held
    // ~100 ms by something else backed it up, and the share set from its few misses cut all eight as
    // they caught up: 1,600 lost; a window at 0.90, slow, whose level fell among the eight's demands,
    // did the same). A queue backing up for longer shares it evenly; an asker limited
    // stays so while sharing lasts, as one alone does. One asker missing in a window (a TCP flood's
    // burst read before anyone's datagram) is not alike anyone: shared as before.
    const largest = demands[demands.length - 1];
    if (demands.length > 1 && largest <= 2 * demands[0] && level !== Infinity && !limited && this.pressedWindows < PRESSED_WINDOWS) return Infinity;
    // Every demand fits: the largest and a tenth more (at the largest itself an asker asking one more
    // the next window lost it, and each such drop kept sharing on for ever).
    if (level === Infinity) level = demands.length > 0 ? largest + Math.min(left, Math.max(1, largest / 10)) : this.floor;
    const bounded = this.share === Infinity ? level : Math.min(Math.max(level, this.share / 2), this.share * 2);
    return Math.max(this.floor, Math.ceil(bounded));
  }

  private forgetIdle(): void {
    for (const [key, a] of this.askers) {
      a.calmWindows = a.droppedInWindow > 0 ? 0 : a.calmWindows + 1;
      a.idleWindows = a.asked > 0 ? 0 : a.idleWindows + 1;
      a.asked = a.admitted = a.droppedInWindow = 0;
      if (a.limited && a.calmWindows >= CALM_WINDOWS) {
        a.limited = false;
        for (const f of this.steering) f.release(a.address);
        this.onLimited?.(a, false);
        a.droppedNow = 0;
      }
      if (!a.limited && a.inflight === 0 && a.idleWindows >= CALM_WINDOWS) this.askers.delete(key);
    }
  }
}
