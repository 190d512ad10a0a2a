// The sidecar's HTTP endpoints on a real socket: the original's /healthcheck/<label> bodies and
// statuses, /healthz's Go-style time, the metrics path, and what is not served.

import t from 'tap';
import { createSidecarMetrics } from '../../pkg/sidecar/metrics.ts';
import { goJson, goTimeString, serveSidecarHttp } from '../../pkg/sidecar/http.ts';
import type { ProbeHealth } from '../../pkg/sidecar/probe.ts';
import { get } from '../helpers/sidecar.ts';

t.test('goTimeString: Go\'s time.Time.String() in UTC', async (t) => {
  t.equal(goTimeString(new Date(Date.UTC(2026, 10, 23, 3, 19, 15, 123))), '2026-11-23 03:19:15.123 +0000 UTC');
  t.equal(goTimeString(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 120))), '2026-01-02 03:04:05.12 +0000 UTC', 'trailing zeros dropped');
  t.equal(goTimeString(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 0))), '2026-01-02 03:04:05 +0000 UTC', 'no fraction at all');
});

t.test('goJson: encoding/json\'s HTML escaping', async (t) => {
  t.equal(goJson({ IsOk: false, LatencySeconds: 0, Err: 'a <b> & "c"' }), '{"IsOk":false,"LatencySeconds":0,"Err":"a \\u003cb\\u003e \\u0026 \\"c\\""}');
});

t.test('routes', async (t) => {
  const metrics = createSidecarMetrics('kubedns', ['good', 'bad']);
  const health = new Map<string, () => ProbeHealth>([
    ['good', () => ({ IsOk: true, LatencySeconds: 0.000412, Err: '' })],
    ['bad', () => ({ IsOk: false, LatencySeconds: 0, Err: 'waiting for first probe' })],
  ]);
  const http = await serveSidecarHttp({ host: '127.0.0.1', port: 0, metricsPath: '/custom', registry: metrics.registry, health, now: () => new Date(Date.UTC(2026, 10, 23, 3, 19, 15, 123)) });
  t.teardown(() => http.close());
  const P = http.port;

  t.same(await get(P, '/healthcheck/good'), { status: 200, type: 'application/json', body: '{"IsOk":true,"LatencySeconds":0.000412,"Err":""}' });
  t.same(await get(P, '/healthcheck/bad'), { status: 503, type: 'application/json', body: '{"IsOk":false,"LatencySeconds":0,"Err":"waiting for first probe"}' });
  t.same(await get(P, '/healthz'), { status: 200, type: 'text/plain; charset=utf-8', body: 'ok (2026-11-23 03:19:15.123 +0000 UTC)\n' });

  const m = await get(P, '/custom?x=1');
  t.equal(m.status, 200);
  t.match(m.type, /^text\/plain; version=0\.0\.4/);
  t.match(m.body, /^kubedns_dnsmasq_hits 0$/m);
  t.match(m.body, /^kubedns_probe_good_latency_ms_bucket\{le="0\.25"\} 0$/m);
  t.match(m.body, /^process_resident_memory_bytes \d+/m, 'default process metrics');

  for (const path of ['/metrics', '/healthcheck/', '/healthcheck/other', '/healthcheck/good/x', '/']) {
    t.same(await get(P, path), { status: 404, type: 'text/plain; charset=utf-8', body: '404 page not found\n' }, path);
  }
  const post = await fetch(`http://127.0.0.1:${P}/healthz`, { method: 'POST' });
  t.equal(post.status, 405);
  await post.text();
  const head = await fetch(`http://127.0.0.1:${P}/healthcheck/bad`, { method: 'HEAD' });
  t.equal(head.status, 503);
  t.equal(await head.text(), '');
});

t.test('a taken port: listen rejects', async (t) => {
  const metrics = createSidecarMetrics('', []);
  const first = await serveSidecarHttp({ host: '127.0.0.1', port: 0, metricsPath: '/metrics', registry: metrics.registry, health: new Map() });
  t.teardown(() => first.close());
  await t.rejects(serveSidecarHttp({ host: '127.0.0.1', port: first.port, metricsPath: '/metrics', registry: metrics.registry, health: new Map() }), { code: 'EADDRINUSE' });
});
