// node-cache's Prometheus metrics, under the original's names so its dashboards and alerts keep
// working: coredns_nodecache_setup_errors_total{errortype} (the setup program's), CoreDNS's
// per-request and cache metrics (request-metrics.ts), the shared cache's size and the upstream
// counts under CoreDNS's cache and forward plugin names. Read from the program's own counters when
// Prometheus scrapes.

import { Registry } from '../metrics/registry.ts';
import { registerProcessMetrics } from '../metrics/process.ts';
import { mirroredCounter } from '../metrics/mirror.ts';
import type { NodeCachePlan } from './plan.ts';
import type { ZoneEngine } from './engine.ts';
import { RequestMetrics } from './request-metrics.ts';

/** The original's error types: the kube-dns ConfigMap, the interface, the rules. */
export const SETUP_ERRORS = ['configmap', 'interfaceadd', 'iptables'] as const;
export type SetupErrorType = (typeof SETUP_ERRORS)[number];

export interface NodeCacheReadings {
  readonly setupErrors: ReadonlyMap<SetupErrorType, number>;
  readonly served: NodeCachePlan | null;
  readonly serving: ZoneEngine | null;
}

export interface NodeCacheMetrics {
  registry: Registry;
  /** What each engine's listeners count into. */
  requests: RequestMetrics;
}

export function createNodeCacheMetrics(read: NodeCacheReadings): NodeCacheMetrics {
  const registry = new Registry();
  registerProcessMetrics(registry);
  mirroredCounter(registry, { name: 'coredns_nodecache_setup_errors_total', help: 'The number of errors during periodic network setup for node-cache', labelNames: ['errortype'] }, () =>
    SETUP_ERRORS.map((e) => [{ errortype: e }, read.setupErrors.get(e) ?? 0]),
  );
  const zones = () => read.serving?.zones ?? [];
  // Several zones may forward to one upstream (the template's three cluster zones): one series per upstream.
  mirroredCounter(registry, { name: 'coredns_forward_requests_total', help: 'Counter of requests made per upstream.', labelNames: ['to'] }, () => {
    const byUpstream = new Map<string, number>();
    for (const z of zones()) for (const s of z.forwarder.serverStats()) byUpstream.set(`${s.server.host}:${s.server.port}`, (byUpstream.get(`${s.server.host}:${s.server.port}`) ?? 0) + s.queries);
    return [...byUpstream].map(([to, n]) => [{ to }, n] as const);
  });
  return { registry, requests: new RequestMetrics(registry) };
}
