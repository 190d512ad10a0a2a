// kube-dns's HTTP endpoints: /readiness, /healthz, /cache, /metrics; and CoreDNS's /health and /ready,
// which the coredns Deployment's probes ask (kube-dns given -conf).
// Plain node:http, bound by pkg/httpserver (why no framework: its README).

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { listenHttp } from '../httpserver/listen.ts';
import { http } from '../httpserver/node-http.ts';
import type { HttpListening } from '../httpserver/listen.ts';

export interface HttpState {
  isSynced(): boolean;
  /** SIGTERM came: /readiness fails while DNS still answers (pkg/signals). */
  isLameDuck(): boolean;
  /** The tree cache as JSON, in the original's shape. */
  cache(): unknown;
  /** /metrics: the registry's content type, and the exposition (every thread's counts). */
  metrics: { contentType: string; render(): Promise<string> };
}

export interface HttpEndpoints {
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

type Route = (state: HttpState) => Promise<{ status: number; type: string; body: string }>;

const routes: Record<string, Route> = {
  // 503 until the first full sync, then 200 "ok" as the original (the Service only routes to a pod
  // that knows the cluster), and 503 again from SIGTERM on (kube-proxy moves the clients away).
  '/readiness': async (s) =>
    s.isLameDuck()
      ? { status: 503, type: 'text/plain', body: 'shutting down (lame duck)\n' }
      : s.isSynced()
        ? { status: 200, type: 'text/plain', body: 'ok\n' }
        : { status: 503, type: 'text/plain', body: 'waiting for the first sync of cluster objects\n' },
  '/healthz': async () => ({ status: 200, type: 'text/plain', body: 'ok\n' }),
  // CoreDNS's health: OK while the process runs, through the lame duck too (a liveness probe).
  '/health': async () => ({ status: 200, type: 'text/plain', body: 'OK' }),
  // CoreDNS's ready, as /readiness: ready once the cluster is read, not from SIGTERM on.
  '/ready': async (s) => {
    const r = await routes['/readiness'](s);
    return r.status === 200 ? { status: 200, type: 'text/plain', body: 'OK' } : r;
  },
  '/cache': async (s) => ({ status: 200, type: 'application/json', body: JSON.stringify(s.cache(), null, '\t') }),
  '/metrics': async (s) => ({ status: 200, type: s.metrics.contentType, body: await s.metrics.render() }),
};

function handle(state: HttpState, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const route = Object.hasOwn(routes, path) ? routes[path] : null;
  if (route === null) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  route(state).then(
    (r) => res.writeHead(r.status, { 'content-type': r.type }).end(req.method === 'HEAD' ? undefined : r.body),
    (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
  );
}

export function createHttpEndpoints(state: HttpState): HttpEndpoints {
  const server: Server = http.createServer((req, res) => handle(state, req, res));
  let listening: HttpListening | null = null;
  return {
    listen: async (host, port) => {
      listening = await listenHttp(server, host, port);
      return listening.port;
    },
    close: async () => {
      await listening?.close();
    },
  };
}
