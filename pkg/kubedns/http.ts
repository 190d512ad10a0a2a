// kube-dns's HTTP endpoints (fastify): /readiness, /healthz, /cache, /metrics.

import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface HttpState {
  isSynced(): boolean;
  /** The tree cache as JSON, in the original's shape. */
  cache(): unknown;
  registry: Registry;
}

export function createHttpServer(state: HttpState): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  // 503 until the first full sync, then 200 "ok" as the original: the Service only routes to a pod that knows the cluster.
  app.get('/readiness', async (_req, reply) => {
    if (state.isSynced()) return reply.type('text/plain').send('ok\n');
    return reply.code(503).type('text/plain').send('waiting for the first sync of cluster objects\n');
  });
  app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok\n'));
  app.get('/cache', async (_req, reply) => reply.type('application/json').send(JSON.stringify(state.cache(), null, '\t')));
  app.get('/metrics', async (_req, reply) => reply.type(state.registry.contentType).send(await state.registry.metrics()));
  return app;
}
