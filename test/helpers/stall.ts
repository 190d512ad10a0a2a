// A stalled-connection flood against a DNS server's TCP port (tests and bench/hostile.ts): `n`
// connections that each stall, even ones after half a query, odd ones after a length prefix
// promising 65,535 bytes. Every socket is destroyed by close().

import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { frame } from '../../pkg/dns/frames.ts';
import { query } from './dns-server.ts';

const CONNECT_WAIT_MS = 1000;

export interface StallFlood {
  /** Connections the server accepted (a refused or reset one still counts as sent). */
  opened: number;
  close(): void;
}

export async function stallFlood(port: number, n: number): Promise<StallFlood> {
  const half = frame(query('kubernetes.default.svc.cluster.local', 1, 1)).subarray(0, 12);
  const sockets: Socket[] = [];
  let opened = 0;
  for (let i = 0; i < n; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, n - i) }, (_, j) =>
        new Promise<void>((resolve) => {
          const s = connect(port, '127.0.0.1');
          sockets.push(s);
          s.on('error', () => resolve()); // refused or reset: part of the flood either way
          // A server whose backlog is full leaves the SYN unanswered for minutes: count it unaccepted.
          const waited = setTimeout(resolve, CONNECT_WAIT_MS);
          s.once('connect', () => {
            clearTimeout(waited);
            opened++;
            s.write((i + j) % 2 === 0 ? half : Buffer.from([0xff, 0xff, 0]));
            resolve();
          });
        }),
      ),
    );
  }
  return { opened, close: () => sockets.forEach((s) => s.destroy()) };
}
