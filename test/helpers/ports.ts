// Free loopback ports for servers that cannot take port 0 (dnsmasq), or that a test stops and starts
// again on the same port: a port free for UDP and TCP now.
//
// The port is drawn from outside the kernel's ephemeral range (net.ipv4.ip_local_port_range). A port
// from inside it (what binding port 0 gives) is the kernel's to hand out again as the source port of
// any client socket on the machine (dig, an HTTP scrape, the API server's connections) once it is
// released: between the check and the server's bind, or while a test restarts a server on it. CI saw
// exactly that: a restarted dnscache failed with `listen EADDRINUSE`. Outside the range only an
// explicit bind can take it.

import { readFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/** The ephemeral range as the kernel says, [low, high]; Linux's default where it cannot be read. */
export function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low) return [low, high];
  } catch {
    // not Linux: fall through
  }
  return [32768, 60999];
}

// Below: well-known ports and the fixed ones servers here use by default (6443, 2379, 8080, 9090, and
// npm start's 1053, 8081, 10053-10056, which the localpod-start test binds beside other tests).
const FLOOR = 20000;
const MIN_GAP = 2000;

/** The widest stretch of ports above FLOOR outside the ephemeral range; null when it leaves too little. */
export function stableRange(): [number, number] | null {
  const [low, high] = ephemeralRange();
  const below: [number, number] = [FLOOR, low - 1];
  const above: [number, number] = [high + 1, 65535];
  const best = below[1] - below[0] >= above[1] - above[0] ? below : above;
  return best[1] - best[0] >= MIN_GAP ? best : null;
}

async function tryPort(port: number): Promise<number | null> {
  const udp = createSocket('udp4');
  try {
    const got = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, '127.0.0.1', () => resolve(udp.address().port));
    });
    const tcp = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(got, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => (ok ? tcp.close(() => resolve()) : resolve()));
    return ok ? got : null;
  } catch {
    return null;
  } finally {
    udp.close();
  }
}

/** Ports this process has handed out: a test asks for several before it binds any (seen: kube-dns's DNS and HTTP ports drawn alike). */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const range = stableRange();
  for (let i = 0; i < 50; i++) {
    const p = await tryPort(range ? range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1)) : 0);
    if (p !== null && !handedOut.has(p)) {
      handedOut.add(p);
      return p;
    }
  }
  throw new Error('no free port');
}
