// The pod at an address, asked of the API server when a limited asker is to be named in the log: the
// Pod watch keeps only each address's namespace (pkg/autopath pod-index.ts, bytes a pod), and a limit
// starting is rare. Bounded all the same (a flood from many addresses must not become a flood of API
// requests): one request at a time, at most ten a minute; beyond that the line gives the namespace alone.

import type { KubeObject } from '../source/source.ts';

const PER_MINUTE = 10;
const TIMEOUT_MS = 1000;

export class PodNames {
  private readonly list: (path: string, timeoutMs: number) => Promise<KubeObject[]>;
  private busy = false;
  private windowStart = 0;
  private asked = 0;

  /** `list`: one GET of a collection (KubernetesSource.list). */
  constructor(list: (path: string, timeoutMs: number) => Promise<KubeObject[]>) {
    this.list = list;
  }

  /** `namespace/name` of the one running pod at `ip` (not on the host's network); null when none, several, or not asked now. */
  readonly of = async (ip: string): Promise<string | null> => {
    const now = Date.now();
    if (now - this.windowStart >= 60_000) [this.windowStart, this.asked] = [now, 0];
    if (this.busy || this.asked >= PER_MINUTE) return null;
    [this.busy, this.asked] = [true, this.asked + 1];
    try {
      const pods = await this.list(`/api/v1/pods?fieldSelector=${encodeURIComponent(`status.podIP=${ip}`)}&limit=5`, TIMEOUT_MS);
      const own = pods.filter((p) => (p.spec as { hostNetwork?: boolean } | undefined)?.hostNetwork !== true && !['Succeeded', 'Failed'].includes((p.status as { phase?: string } | undefined)?.phase ?? ''));
      return own.length === 1 ? `${own[0].metadata.namespace}/${own[0].metadata.name}` : null;
    } catch {
      return null;
    } finally {
      this.busy = false;
    }
  };
}
