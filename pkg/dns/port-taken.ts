// Whether another socket holds a UDP address and port, found with a plain (not SO_REUSEPORT) bind
// that fails with EADDRINUSE. For servers that bind with SO_REUSEPORT themselves, where a bind would
// succeed beside anyone else's: node-cache (is a successor serving?) and dnscache --workers (is
// another server already there?).

import { createSocket } from 'node:dgram';
const { isIP } = process.getBuiltinModule('node:net');

export function udpPortTaken(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createSocket(isIP(ip) === 6 ? 'udp6' : 'udp4');
    probe.once('error', (err: NodeJS.ErrnoException) => {
      probe.close();
      resolve(err.code === 'EADDRINUSE');
    });
    probe.bind({ address: ip, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/** Rejects with EADDRINUSE (as a bind would) when another socket holds ip:port (UDP); port 0: nothing to check. */
export async function assertUdpPortFree(ip: string, port: number): Promise<void> {
  if (port !== 0 && (await udpPortTaken(ip, port))) throw Object.assign(new Error(`bind EADDRINUSE ${ip}:${port}`), { code: 'EADDRINUSE' });
}
