// How far behind the readers of a UDP port are, as the kernel counts it (/proc/net/udp and udp6):
// the bytes queued on its sockets now, and the datagrams dropped for want of room since they opened
// (its unconnected sockets: a steered flood's own queue drops by design).
// A client that waits for its answers never builds a queue; one that sends faster than the port is
// read fills it, and then everyone's packets are dropped. Linux only: elsewhere, nothing is known.

const { readFileSync } = process.getBuiltinModule('node:fs');

export interface UdpBacklog {
  /** Bytes waiting to be read, summed over the port's sockets (SO_REUSEPORT: one per thread). */
  queued: number;
  /** Datagrams dropped, summed likewise. */
  drops: number;
}

/** The port's backlog in this network namespace; null where /proc/net/udp cannot be read or holds no such port. */
export function udpBacklog(port: number): UdpBacklog | null {
  let found = false;
  const b: UdpBacklog = { queued: 0, drops: 0 };
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'latin1');
    } catch {
      continue;
    }
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ref pointer drops
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 13 || parseInt(f[1].slice(f[1].indexOf(':') + 1), 16) !== port) continue;
      // A socket connected to one flow (a flood steered to a queue of its own: udp-steer.ts) is not the port's queue.
      if (!/^0+:0+$/.test(f[2])) continue;
      found = true;
      b.queued += parseInt(f[4].slice(f[4].indexOf(':') + 1), 16);
      b.drops += Number(f[12]);
    }
  }
  return found ? b : null;
}
