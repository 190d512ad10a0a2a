// Free loopback ports for servers that cannot take port 0 (dnsmasq): a port free for UDP and TCP now.

import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

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

export async function freePort(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const p = await tryPort(0);
    if (p !== null) return p;
  }
  throw new Error('no free port');
}
