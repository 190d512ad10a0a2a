// Binding a node:http server and closing it: the one way kube-dns, dnsmasq-nanny and the sidecar
// serve their few GET routes (no framework: fastify's import alone costs ~26 MB of RSS).

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpListening {
  /** The port bound (useful with port 0). */
  port: number;
  /** Drops open connections (keep-alive included) and stops listening. */
  close(): Promise<void>;
}

/**
 * Listens on host:port ('' = every address); rejects with the bind error (EADDRINUSE...). `reusePort`:
 * SO_REUSEPORT, so a successor process binds beside this one (node-cache's DaemonSet surge).
 */
export function listenHttp(server: Server, host: string, port: number, reusePort = false): Promise<HttpListening> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: host === '' ? undefined : host, reusePort }, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
