// A UDP flood faster than a thread reads fills the port's one receive queue, and every other asker's
// query waits behind all of it (a 4 MiB buffer: ~50 ms). Fair shares cannot help there: by the time a
// datagram is read, its wait is over. The kernel can: a UDP socket connected to one remote address
// and port, bound to the same port in the same SO_REUSEPORT group, gets that flow's datagrams ahead of
// the group (its lookup scores higher), in a queue of its own. Kept small, that queue holds a few of
// the flood's datagrams; the kernel drops the rest before we spend anything on them, and the port's
// own queue is left to everyone else.
//
// A flow (source address and port) is steered when, while misses are shared because the queue backs
// up, its asker's misses were dropped over its share at least MIN_DROPS times in a window, or it made
// half the window's misses or more (MIN_DROPS at least) while it backs up, dropped or not: a flood that
// ran unshared just under the thread's capacity and then burst (its sender catching up) backed the
// queue up 3.5 MB in one window, and everyone waited ~80 ms behind it while its first drops were
// counted (bench:fair, dnscache, 2026-11-29). Misses are counted only in a window after a busy one
// (half busyAt): a few Map operations a miss where it may matter. At most MAX_FLOWS at once, the most
// counted first. What arrives on a flow's queue is answered as any other
// query (its asker keeps its share); once a miss of it is dropped over that share, the queue is not
// read again until the window ends. Read and dropped one by one, the flood still cost the thread a
// few microseconds a datagram, tens of thousands a second, in bursts the others' queries waited
// behind; unread, the queue stays full and the kernel drops the rest for nothing. The flow's hits
// wait with it: its own queue, its own loss. A flow goes back when its asker is no longer limited,
// or sharing ends; one steered before any drop is limited from then on (named, and let go the same
// way: Fairness). Only an asker that is the packet's own source is steered: one named in a trusted
// cache's Client Subnet shares its cache's flows with everyone behind it.
//
// A TCP connection needs no queue of its own (the kernel keeps one per connection): once a miss of
// its own asker is dropped over its share, it is held likewise, unread until the window ends (hold).

/** What is not read again until the window ends: a steered flow's queue, or a TCP connection. */
export interface Pausable {
  /** Reads nothing (the kernel keeps what fits: a UDP queue drops the rest, TCP stops its sender) until resume(). */
  pause(): void;
  resume(): void;
}

/** A flow's own queue: a connected socket (UdpListener.steer). */
export interface SteeredQueue extends Pausable {
  close(): void;
}

export interface FlowSteeringOptions {
  /** Opens a queue of its own for datagrams from `address`:`port`; null when it cannot. */
  open(address: string, port: number): SteeredQueue | null;
}

/** Flows steered at most at once. */
export const MAX_FLOWS = 16;
/** Drops in a window from which a flow is steered (a well-behaved client sends far fewer). */
const MIN_DROPS = 50;
/** Flows counted a window at most (a spoofed flood from new ports each time must not grow memory). */
const MAX_COUNTED = 1024;

/** A window's counts by flow (address → port → count), MAX_COUNTED flows at most. */
class FlowCounts {
  private readonly byAddress = new Map<string, Map<number, number>>();
  private flows = 0;
  /** Counted in all. */
  total = 0;

  add(address: string, port: number): void {
    let ports = this.byAddress.get(address);
    if (ports === undefined) {
      if (this.flows >= MAX_COUNTED) return;
      this.byAddress.set(address, (ports = new Map()));
    }
    const n = ports.get(port);
    if (n === undefined) {
      if (this.flows >= MAX_COUNTED) return;
      this.flows++;
    }
    ports.set(port, (n ?? 0) + 1);
    this.total++;
  }

  /** The flows counted `min` times or more: [address, port, count]. */
  atLeast(min: number): [string, number, number][] {
    const flows: [string, number, number][] = [];
    for (const [address, ports] of this.byAddress) for (const [port, n] of ports) if (n >= min) flows.push([address, port, n]);
    return flows;
  }

  clear(): void {
    this.byAddress.clear();
    this.flows = 0;
    this.total = 0;
  }
}

export class FlowSteering {
  private readonly o: FlowSteeringOptions;
  /** This window's drops, and misses (while `counting`). */
  private readonly drops = new FlowCounts();
  private readonly misses = new FlowCounts();
  private counting = false;
  /** Steered now: address → port → its queue. */
  private readonly steered = new Map<string, Map<number, SteeredQueue>>();
  private steeredCount = 0;
  /** Steered queues not read until the window ends: their askers' shares are spent. */
  private readonly paused = new Set<Pausable>();

  constructor(o: FlowSteeringOptions) {
    this.o = o;
  }

  /** Flows on a queue of their own now. */
  get size(): number {
    return this.steeredCount;
  }

  /** A miss from `address`:`port`, its asker, dropped over its share: a steered flow's queue is not read again this window. */
  dropped(address: string, port: number): void {
    const q = this.steered.get(address)?.get(port);
    if (q !== undefined) this.hold(q);
    this.drops.add(address, port);
  }

  /** A miss from `address`:`port`, its asker, admitted: counted after a busy window. */
  missed(address: string, port: number): void {
    if (this.counting) this.misses.add(address, port);
  }

  /**
   * Not read again until the window ends: a steered flow's queue, or a TCP connection whose asker's
   * miss was dropped over its share. A flooder's burst of pipelined frames (dnsperf
   * sends ~1,000 at once when its timeouts free its window) was otherwise worked through in one go,
   * nearly all dropped, and held the thread 1.6-2.3 ms; every hit read behind it waited as long.
   */
  hold(q: Pausable): void {
    if (this.paused.has(q)) return;
    q.pause();
    this.paused.add(q);
  }

  /**
   * A window's end: paused queues read again (a new share); with `pressure`, the most dropped flows,
   * and the one that made most misses, get queues of their own. Counts start afresh; misses are
   * counted in the next window if `busy`. Returns the addresses of the flows steered now.
   */
  window(pressure: boolean, busy = false): string[] {
    if (this.paused.size > 0) {
      // Cleared first: a TCP connection resumed takes its frames at once, and may be held again.
      const held = [...this.paused];
      this.paused.clear();
      for (const q of held) q.resume();
    }
    const steered = pressure ? this.steerAll([...this.drops.atLeast(MIN_DROPS), ...this.heavy()]) : [];
    this.drops.clear();
    this.misses.clear();
    this.counting = busy;
    return steered;
  }

  /** The queue backs up within a window: the flow making most of its misses so far gets a queue of its own now (its address returned). */
  steerHeavy(): string[] {
    return this.steerAll(this.heavy());
  }

  /** Flows that made half the window's misses or more, MIN_DROPS at least. */
  private heavy(): [string, number, number][] {
    return this.misses.atLeast(Math.max(MIN_DROPS, this.misses.total / 2));
  }

  /** The most counted first, up to MAX_FLOWS steered; the addresses of those steered now. */
  private steerAll(flows: [string, number, number][]): string[] {
    flows.sort((x, y) => y[2] - x[2]);
    const steered: string[] = [];
    for (const [address, port] of flows) if (this.steeredCount < MAX_FLOWS && this.steer(address, port)) steered.push(address);
    return steered;
  }

  /** `address`'s flows back to the port's queue (its asker is no longer limited). */
  release(address: string): void {
    const ports = this.steered.get(address);
    if (ports === undefined) return;
    for (const q of ports.values()) {
      q.close();
      this.paused.delete(q);
    }
    this.steeredCount -= ports.size;
    this.steered.delete(address);
  }

  releaseAll(): void {
    for (const address of [...this.steered.keys()]) this.release(address);
  }

  /** Whether the flow got a queue of its own now (not when it had one, or none could be opened). */
  private steer(address: string, port: number): boolean {
    if (this.steered.get(address)?.has(port) === true) return false; // dropped and missed both
    const q = this.o.open(address, port);
    if (q === null) return false;
    let ports = this.steered.get(address);
    if (ports === undefined) this.steered.set(address, (ports = new Map()));
    ports.set(port, q);
    this.steeredCount++;
    return true;
  }
}
