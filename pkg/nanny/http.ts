// -metricsAddress: GET /metrics (Prometheus text), /healthz and /readiness (the dnsmasq container's
// readiness probe). node:http, as kube-dns's endpoints: three routes need no framework, and the nanny shares the pod's memory with the forwarder.

import type { Server } from 'node:http';
import type { Registry } from '../metrics/registry.ts';
import { listenHttp } from '../httpserver/listen.ts';
import { http } from '../httpserver/node-http.ts';
import type { HttpListening } from '../httpserver/listen.ts';

export interface ListenAddress {
  /** '' = every address (Go's `:port`). */
  host: string;
  port: number;
}

/** `host:port`, `:port` or `[v6]:port` → the address, or the reason it is not one. */
export function parseListenAddress(s: string): ListenAddress | string {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(s);
  if (m === null) return 'expected host:port, :port or [ipv6]:port';
  const port = Number(m[3]);
  if (port > 65535) return 'the port must be 0-65535';
  return { host: m[1] ?? m[2], port };
}

/** `notReady`: why GET /readiness answers 503, or null for 200. */
export async function serveMetrics(at: ListenAddress, registry: Registry, notReady: () => string | null): Promise<HttpListening> {
  const server: Server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed\n');
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readiness') {
      const why = notReady();
      res.writeHead(why === null ? 200 : 503, { 'content-type': 'text/plain' }).end(`${why ?? 'ok'}\n`);
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  return listenHttp(server, at.host, at.port);
}
