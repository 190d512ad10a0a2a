// Expiring watches by a too-old resourceVersion without restarting the API server, for bench:scale-api.
// The kube-apiserver's watch cache keeps a kind's recent events (at least those of the last 75 s, up to
// its capacity): a watch resumed from a version older than its window is answered 410 Gone and the
// watcher must list again. While the servers are cut off (test/e2e/harness/api-proxy.ts), the bench
// rewrites one object of each kind until a watch from the version current at the cut is refused so, for
// every kind.

import { listPath } from './api-cluster.ts';
import type { BenchCluster, KubeObject } from './api-cluster.ts';

export class WatchExpiryError extends Error {
  code = 'BENCH_ERR_WATCH_EXPIRY';
}

const PROBE_EVERY_MS = 5_000;

/** Whether a watch of `kind` from `resourceVersion` is refused as too old (HTTP 410, or an ERROR event with code 410). */
async function watchExpired(api: BenchCluster, kind: string, resourceVersion: string): Promise<boolean> {
  const r = await api.cluster.request('GET', `${listPath(kind)}?watch=1&resourceVersion=${resourceVersion}&timeoutSeconds=1`);
  return r.status === 410 || (typeof r.body === 'string' ? r.body : JSON.stringify(r.body)).includes('"code":410');
}

/**
 * Rewrites an annotation of each of `objects` (one per kind) until, for every kind, a watch from the
 * resourceVersion current when it was called is refused as expired; throws after `limitMs`.
 */
export async function expireWatches(api: BenchCluster, objects: KubeObject[], limitMs: number): Promise<{ ms: number; writes: number }> {
  const t0 = performance.now();
  const versions = await Promise.all(objects.map(async (o) => (await api.cluster.request('GET', `${listPath(o.kind)}?limit=1`)).body.metadata.resourceVersion as string));
  let writes = 0;
  const expired = objects.map(() => false);
  const expiring = objects.map(async (o, k) => {
    let probedAt = performance.now();
    while (!expired[k]) {
      if (performance.now() - t0 > limitMs) throw new WatchExpiryError(`${o.kind}'s watch from ${versions[k]} not expired after ${writes} writes in ${limitMs} ms`);
      await api.annotate(o, { 'bench.kube-dns-ts/tick': String(writes++) });
      if (performance.now() - probedAt < PROBE_EVERY_MS) continue;
      expired[k] = await watchExpired(api, o.kind, versions[k]);
      probedAt = performance.now();
    }
  });
  await Promise.all(expiring);
  return { ms: performance.now() - t0, writes };
}
