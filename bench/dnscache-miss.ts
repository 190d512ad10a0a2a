// The cache-miss timer: one query outstanding at a time, each for a name nobody asked before, sent
// in turn to every target (direct to the upstream, and through each cache) so drift on a shared
// machine hits all of them alike. The client is the same for every target, so its own cost cancels
// when the direct times are subtracted.

import dgram from 'node:dgram';
import type { Socket } from 'node:dgram';

export interface MissTarget {
  name: string;
  port: number;
}

export interface MissTimes {
  /** Round-trip times in milliseconds, sorted. */
  ms: number[];
  lost: number;
  /** Replies that were not NOERROR with an answer. */
  bad: number;
}

const TIMEOUT_MS = 2000;
const RD = 0x0100;

/** An A query for `name` with RD set and no EDNS, as dnsperf sends them. */
function encodeQuery(id: number, name: string): Buffer {
  const labels = name.split('.').filter(Boolean);
  const q = Buffer.alloc(12 + labels.reduce((n, l) => n + l.length + 1, 1) + 4);
  q.writeUInt16BE(id, 0);
  q.writeUInt16BE(RD, 2);
  q.writeUInt16BE(1, 4);
  let off = 12;
  for (const l of labels) {
    q[off++] = l.length;
    off += q.write(l, off, 'latin1');
  }
  q[off++] = 0;
  q.writeUInt16BE(1, off); // A
  q.writeUInt16BE(1, off + 2); // IN
  return q;
}

class Asker {
  readonly socket: Socket = dgram.createSocket('udp4');
  private waiting: ((reply: Buffer | null) => void) | null = null;
  private id = 0;
  private readonly port: number;

  constructor(port: number) {
    this.port = port;
    this.socket.on('message', (msg) => {
      if (this.waiting !== null && msg.length >= 12 && msg.readUInt16BE(0) === this.id) {
        const done = this.waiting;
        this.waiting = null;
        done(msg);
      }
    });
  }

  async bind(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', () => resolve()));
  }

  /** Milliseconds for one answered query; null when lost, NaN when the reply had no answer. */
  async time(name: string): Promise<number | null> {
    this.id = (this.id + 1) & 0xffff;
    const query = encodeQuery(this.id, name);
    const replied = new Promise<Buffer | null>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        resolve(null);
      }, TIMEOUT_MS);
      this.waiting = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
    });
    const t0 = process.hrtime.bigint();
    this.socket.send(query, this.port, '127.0.0.1');
    const reply = await replied;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (reply === null) return null;
    const rcode = reply[3] & 0xf;
    return rcode === 0 && reply.readUInt16BE(6) > 0 ? ms : NaN;
  }
}

/**
 * Times `count` never-asked names per target (after `warmup` untimed ones, which let the caches'
 * miss path get compiled), one query in flight at a time, targets taken in turn for every name.
 * Names are `<tag>-<i>-<target index>.miss.bench`, unique per target and run.
 */
export async function timeMisses(targets: MissTarget[], count: number, warmup: number): Promise<Record<string, MissTimes>> {
  const tag = `r${Date.now().toString(36)}`;
  const askers = targets.map((t) => new Asker(t.port));
  await Promise.all(askers.map((a) => a.bind()));
  const out: Record<string, MissTimes> = {};
  for (const t of targets) out[t.name] = { ms: [], lost: 0, bad: 0 };
  try {
    for (let i = 0; i < warmup + count; i++) {
      for (let k = 0; k < targets.length; k++) {
        // Rotate who goes first so no target always follows the same one.
        const j = (i + k) % targets.length;
        const ms = await askers[j].time(`${tag}-${i}-${j}.miss.bench`);
        if (i < warmup) continue;
        const times = out[targets[j].name];
        if (ms === null) times.lost++;
        else if (Number.isNaN(ms)) times.bad++;
        else times.ms.push(ms);
      }
    }
  } finally {
    for (const a of askers) a.socket.close();
  }
  for (const t of targets) out[t.name].ms.sort((a, b) => a - b);
  return out;
}

/** The q-quantile of sorted values. */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
