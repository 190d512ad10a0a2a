// Asks a DNS server one question over UDP until the answer section is non-empty: the watch-to-answer probe.
// One socket per server; replies are matched by id, and a lost or late reply is asked again.

import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';

const TYPE = { A: 1, AAAA: 28 } as const;

function query(id: number, name: string, type: number): Buffer {
  const labels = name.replace(/\.$/, '').split('.');
  const q = Buffer.alloc(12 + labels.reduce((n, l) => n + l.length + 1, 0) + 1 + 4);
  q.writeUInt16BE(id, 0);
  q.writeUInt16BE(0x0100, 2); // RD
  q.writeUInt16BE(1, 4);
  let o = 12;
  for (const l of labels) {
    q[o++] = l.length;
    o += q.write(l, o, 'ascii');
  }
  q[o++] = 0;
  q.writeUInt16BE(type, o);
  q.writeUInt16BE(1, o + 2);
  return q;
}

export class Prober {
  private socket: Socket;
  private port: number;
  private nextId = 1;
  private waiting = new Map<number, (answers: number) => void>();

  constructor(port: number) {
    this.port = port;
    this.socket = createSocket('udp4');
    this.socket.on('message', (msg) => {
      if (msg.length < 12) return;
      const done = this.waiting.get(msg.readUInt16BE(0));
      if (done) done((msg[3] & 0x0f) === 0 ? msg.readUInt16BE(6) : 0);
    });
  }

  /** Number of answers to one question (0 on NXDOMAIN, NODATA, other errors or no reply within `ms`). */
  ask(name: string, type: keyof typeof TYPE, ms = 200): Promise<number> {
    const id = this.nextId;
    this.nextId = (this.nextId % 0xffff) + 1;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(0);
      }, ms);
      this.waiting.set(id, (n) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(n);
      });
      this.socket.send(query(id, name, TYPE[type]), this.port, '127.0.0.1');
    });
  }

  /** Milliseconds from `since` (performance.now()) until `name` has an answer; NaN after `limitMs`. */
  async answeredAfter(name: string, type: keyof typeof TYPE, since: number, limitMs = 10_000): Promise<number> {
    for (;;) {
      if ((await this.ask(name, type)) > 0) return performance.now() - since;
      if (performance.now() - since > limitMs) return NaN;
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  close(): void {
    this.socket.close();
  }
}
