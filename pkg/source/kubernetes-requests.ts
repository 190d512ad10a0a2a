// Every request the API source sends, counted as client-go counts its own (what CoreDNS exports as
// coredns_kubernetes_rest_client_*): results by status code ("<error>" when none came back) and
// method, and the time to the response's headers by verb. A watch counts once, when it starts.

import { HistogramCounts } from '../metrics/histogram.ts';
import type { KubeClient } from './kubernetes-client.ts';

/** Prometheus's DefBuckets, as client-go's latency metric (CoreDNS's) has them. */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class RestClientRequests {
  /** `<code> <method>` → requests. */
  readonly results = new Map<string, number>();
  /** GET's time to headers (the only verb the source sends). */
  readonly latency = new HistogramCounts(DEF_BUCKETS);
  /** The API server's host[:port], once a client is counted. */
  host = '';

  /** `client` with each of its requests counted here. */
  counted(client: KubeClient): KubeClient {
    this.host = new URL(client.server).host;
    const count = (code: string) => this.results.set(`${code} GET`, (this.results.get(`${code} GET`) ?? 0) + 1);
    return {
      server: client.server,
      identity: client.identity,
      get: async (path, signal, accept) => {
        const started = performance.now();
        try {
          const res = await client.get(path, signal, accept);
          count(String(res.statusCode ?? 0));
          return res;
        } catch (err) {
          count('<error>');
          throw err;
        } finally {
          this.latency.observe((performance.now() - started) / 1000);
        }
      },
    };
  }
}
