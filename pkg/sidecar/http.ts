// The sidecar's HTTP endpoints (--prometheus-addr:--prometheus-port): the metrics path, /healthz, and
// /healthcheck/<label> per probe, answered as the original's. node:http as kube-dns's and the nanny's
// endpoints: a handful of GET routes need no framework, and this container's memory request is 20 Mi.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Registry } from '../metrics/registry.ts';
import { listenHttp } from '../httpserver/listen.ts';
import { http } from '../httpserver/node-http.ts';
import type { HttpListening } from '../httpserver/listen.ts';
import type { ProbeHealth } from './probe.ts';

export interface SidecarHttpOptions {
  /** '' = every address. */
  host: string;
  port: number;
  /** --prometheus-path. */
  metricsPath: string;
  registry: Registry;
  /** label → the probe's current health. */
  health: ReadonlyMap<string, () => ProbeHealth>;
  now?: () => Date;
}

const HEALTHCHECK = '/healthcheck/';

/** Go's time.Time.String() in UTC: `2026-11-23 03:19:15.123 +0000 UTC` (fraction without trailing zeros). */
export function goTimeString(d: Date): string {
  const iso = d.toISOString(); // 2026-11-23T03:19:15.120Z
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction === '' ? '' : `.${fraction}`} +0000 UTC`;
}

/** JSON as Go's encoding/json writes it: <, > and & escaped as \u003c, \u003e, \u0026. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type }).end(req.method === 'HEAD' ? undefined : body);
}

function handle(o: SidecarHttpOptions, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  if (path === o.metricsPath) {
    o.registry.metrics().then(
      (text) => send(req, res, 200, o.registry.contentType, text),
      (err: Error) => send(req, res, 500, 'text/plain; charset=utf-8', `${err.message}\n`),
    );
    return;
  }
  if (path === '/healthz') {
    send(req, res, 200, 'text/plain; charset=utf-8', `ok (${goTimeString((o.now ?? (() => new Date()))())})\n`);
    return;
  }
  const health = path.startsWith(HEALTHCHECK) ? o.health.get(path.slice(HEALTHCHECK.length)) : undefined;
  if (health !== undefined) {
    const h = health();
    send(req, res, h.IsOk ? 200 : 503, 'application/json', goJson(h));
    return;
  }
  send(req, res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
}

export async function serveSidecarHttp(o: SidecarHttpOptions): Promise<HttpListening> {
  const server: Server = http.createServer((req, res) => handle(o, req, res));
  return listenHttp(server, o.host, o.port);
}
