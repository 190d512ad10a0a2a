// The TCP side (RFC 7766): 2-byte length-prefixed messages, several in flight per connection
// (answered in completion order; IDs pair them up), an idle timeout, a connection cap, and
// backpressure: reading stops while the write buffer is full or too many queries are pending.
//
// Stalled clients must not lock others out (RFC 7766 §6.2.2): a frame begun must be finished within
// frameTimeoutMs of its first byte, however slowly its bytes trickle in, and at the cap a newcomer
// takes the place of the connection that made progress (a whole query in, an answer out) least
// recently and owes nothing.

const net = process.getBuiltinModule('node:net');
import type { AddressInfo, Server, Socket } from 'node:net';
import type { Responder } from './responder.ts';
import type { Pausable } from './udp-steer.ts';

/** Why the server closed a connection: nothing for idleTimeoutMs, a frame unfinished for frameTimeoutMs, or room made at the cap. */
export type TcpCloseReason = 'idle' | 'stalled' | 'evicted';

export interface TcpOptions {
  onQuery(msg: Buffer, address: string, port: number, via: Responder): void;
  /** A frame that cannot be a DNS message (length 0): the connection closes after it. */
  onBadFrame(): void;
  onDropped(reason: string): void;
  onOpenChange(open: number): void;
  onClosed(reason: TcpCloseReason): void;
  idleTimeoutMs: number;
  frameTimeoutMs: number;
  maxConnections: number;
  maxPipelined: number;
  /** SO_REUSEPORT (see DnsServerOptions.reusePort). */
  reusePort: boolean;
}

export class TcpListener {
  private readonly server: Server;
  private readonly opts: TcpOptions;
  /** Open connections; each stamps its last progress (TcpConnection.progressAt), read only at the cap. */
  readonly connections = new Set<TcpConnection>();
  private closing = false;

  constructor(opts: TcpOptions) {
    this.opts = opts;
    this.server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.accept(socket));
    // Accept errors (EMFILE...) must not take the process down; the listener keeps going.
    this.server.on('error', () => {});
  }

  listen(address: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen({ host: address, port, exclusive: true, reusePort: this.opts.reusePort }, () => {
        this.server.off('error', onError);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  private accept(socket: Socket): void {
    if (this.closing || (this.connections.size >= this.opts.maxConnections && !this.evictOne())) {
      socket.on('error', () => {});
      socket.destroy();
      this.opts.onDropped('tcp-cap');
      return;
    }
    const conn = new TcpConnection(socket, this.opts, () => {
      if (this.connections.delete(conn)) this.opts.onOpenChange(this.connections.size);
    });
    this.connections.add(conn);
    this.opts.onOpenChange(this.connections.size);
  }

  /** Closes the connection with the oldest progress that owes no answer; false when every one does. */
  private evictOne(): boolean {
    let oldest: TcpConnection | null = null;
    for (const c of this.connections) {
      if (!c.owesAnswers() && (oldest === null || c.progressAt < oldest.progressAt)) oldest = c;
    }
    oldest?.close('evicted');
    return oldest !== null;
  }

  /** Stops accepting; open connections stop reading and close once their answers are out. */
  stopAccepting(): Promise<void> {
    this.closing = true;
    for (const c of this.connections) c.stop();
    return new Promise((resolve) => {
      if (!this.server.listening) resolve();
      else this.server.close(() => resolve());
    });
  }

  destroyAll(): void {
    for (const c of this.connections) c.destroy();
  }
}

/**
 * Frames this thread's connections take in all in a turn of the event loop; the rest wait for the
 * next, and the UDP sockets are read between. A pipelined burst read at once (1,300 small queries
 * fill a 64 KiB read) was otherwise answered in one go, every other client's query waiting behind it
 * (kube-dns answering a TCP flood it had room for, never shared: hits' p99 on the wire 68 ms on 2
 * CPUs); 32 a turn for each connection still let a flood's 10 connections take 320 (9.6 ms).
 */
const FRAMES_A_TURN = 32;
/** Stamps progress in order (TcpConnection.progressAt): a count, where reordering a Set twice a query cost 9% of a TCP hit. */
let progressCount = 0;
let framesLeft = FRAMES_A_TURN;
let turnTaken = false;
const nextTurnStarts = (): void => {
  framesLeft = FRAMES_A_TURN;
  turnTaken = false;
};

/** Whether a frame may be taken this turn: one of FRAMES_A_TURN (the count starts afresh at the next check phase). */
function frameOfTurn(): boolean {
  if (!turnTaken) {
    turnTaken = true;
    setImmediate(nextTurnStarts);
  }
  if (framesLeft === 0) return false;
  framesLeft--;
  return true;
}

export class TcpConnection implements Responder, Pausable {
  readonly transport = 'tcp';
  readonly headroom = 2;
  private readonly socket: Socket;
  private readonly opts: TcpOptions;
  private readonly onClose: () => void;
  /** When it last made progress (a whole query in, an answer out): progressCount then. */
  progressAt = ++progressCount;
  private pending: Buffer | null = null;
  /** Runs while a frame is begun and unfinished: the frame's deadline, from its first byte. */
  private frameTimer: NodeJS.Timeout | null = null;
  private inflight = 0;
  /** The peer half-closed: answer what is buffered, then end. */
  private peerEnded = false;
  /** Take no more frames (bad frame, server closing); end once nothing is owed. */
  private stopped = false;
  private writeBlocked = false;
  private closed = false;
  /** Its asker is over its share (Fairness): no frames taken until resume(), at the window's end. */
  private held = false;
  /** pump() is running: a send() from within it leaves the frames to its loop. */
  private pumping = false;
  /** The turn's FRAMES_A_TURN taken: the rest wait for the next turn of the event loop (setImmediate). */
  private yielded = false;
  private readonly nextTurn = (): void => {
    this.yielded = false;
    this.pump();
  };
  private readonly address: string;
  private readonly port: number;

  constructor(socket: Socket, opts: TcpOptions, onClose: () => void) {
    this.socket = socket;
    this.opts = opts;
    this.onClose = onClose;
    this.address = socket.remoteAddress ?? '';
    this.port = socket.remotePort ?? 0;
    socket.setTimeout(opts.idleTimeoutMs);
    socket.on('timeout', () => {
      // Idle means no traffic and nothing owed; a slow handler keeps the connection.
      if (this.inflight > 0) socket.setTimeout(opts.idleTimeoutMs);
      else this.close('idle');
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => {
      this.peerEnded = true;
      this.pump();
    });
    socket.on('drain', () => {
      this.writeBlocked = false;
      this.pump();
    });
    socket.on('error', () => {}); // resets and timeouts end in 'close'
    socket.on('close', () => {
      this.closed = true;
      this.clearFrameTimer();
      this.onClose();
    });
  }

  owesAnswers(): boolean {
    return this.inflight > 0;
  }

  /** Closes the connection at once, for `reason` (counted). */
  close(reason: TcpCloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.clearFrameTimer();
    this.onClose();
    this.opts.onClosed(reason);
    this.socket.destroy();
  }

  private clearFrameTimer(): void {
    if (this.frameTimer === null) return;
    clearTimeout(this.frameTimer);
    this.frameTimer = null;
  }

  private onData(chunk: Buffer): void {
    if (this.stopped) return;
    this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pump();
  }

  // Takes complete frames off the buffer while there is room to answer them, then decides
  // whether to read on, pause, or end the connection. An answer sent while it runs (a cache hit is
  // answered inside onQuery) leaves the rest to the loop: pumping from send() again would recurse once
  // per frame answered at once, and thousands pipelined in one read overflowed the stack.
  // The answers sent meanwhile go out in one write (corked): a write each was 62% of a TCP hit's CPU
  // over one pipelined connection, and one a turn tripled its QPS.
  private pump(): void {
    if (this.closed || this.pumping) return;
    this.pumping = true;
    this.socket.cork();
    try {
      this.takeFrames();
    } finally {
      this.pumping = false;
      this.socket.uncork();
    }
  }

  private takeFrames(): void {
    while (!this.stopped && !this.held && !this.yielded && this.pending !== null && !this.writeBlocked && this.inflight < this.opts.maxPipelined) {
      const buf = this.pending;
      if (buf.length < 2) break;
      const len = (buf[0] << 8) | buf[1];
      if (len === 0) {
        this.opts.onBadFrame();
        this.stop();
        return;
      }
      if (buf.length < 2 + len) break;
      // Only a whole frame waiting is left to the next turn: a begun one is read on as it comes.
      if (!frameOfTurn()) {
        this.yielded = true;
        setImmediate(this.nextTurn);
        break;
      }
      const frame = buf.subarray(2, 2 + len);
      this.pending = buf.length === 2 + len ? null : buf.subarray(2 + len);
      this.inflight++;
      this.clearFrameTimer();
      this.progressAt = ++progressCount;
      this.opts.onQuery(frame, this.address, this.port, this);
      if (this.closed) return;
    }
    // A begun frame has its own deadline, from its first byte: trickling bytes do not extend it.
    // Whole frames waiting on us (pipeline full, writes blocked) are not the client's stall.
    if (this.pending !== null && this.frameTimer === null && !this.hasFrame()) {
      this.frameTimer = setTimeout(() => this.close('stalled'), this.opts.frameTimeoutMs);
      this.frameTimer.unref();
    }
    if (this.stopped || this.peerEnded) {
      if (this.inflight === 0 && (this.stopped || !this.hasFrame())) this.socket.end();
      return;
    }
    const stalled = this.held || this.yielded || this.writeBlocked || this.inflight >= this.opts.maxPipelined;
    if (stalled) this.socket.pause();
    else if (this.socket.isPaused()) this.socket.resume();
  }

  private hasFrame(): boolean {
    const buf = this.pending;
    return buf !== null && buf.length >= 2 && buf.length >= 2 + ((buf[0] << 8) | buf[1]);
  }

  /**
   * Answers that come later (misses, their upstream's reply read) are held until this turn of the
   * event loop ends, and go out in one write with whatever else completes in it: a write each cost
   * dnscache 37-46 µs of CPU a TCP miss over one pipelined connection, 29-37 corked (4 pairs).
   */
  private corkedTillTurn = false;
  private readonly uncorkTurn = (): void => {
    this.corkedTillTurn = false;
    this.socket.uncork();
  };

  send(out: Buffer): void {
    this.inflight--;
    if (this.closed) return;
    if (!this.pumping && !this.corkedTillTurn) {
      this.corkedTillTurn = true;
      this.socket.cork();
      setImmediate(this.uncorkTurn);
    }
    if (!this.socket.write(out)) this.writeBlocked = true;
    this.progressAt = ++progressCount;
    this.pump();
  }

  skip(): void {
    this.inflight--;
    this.pump();
  }

  /** Takes no frames, and reads nothing, until resume(): the frames read stay buffered. */
  pause(): void {
    this.held = true;
  }

  resume(): void {
    if (!this.held) return;
    this.held = false;
    this.pump();
  }

  /** Held `ms` by a timer of its own: where no window of this thread's resumes it (Query.holdMs). */
  holdFor(ms: number): void {
    if (this.held) return;
    this.pause();
    setTimeout(() => this.resume(), ms).unref();
  }

  /** Takes no more frames; ends the connection once every accepted query is answered. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.pending = null;
    this.pump();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
