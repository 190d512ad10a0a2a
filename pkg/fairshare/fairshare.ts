// A program's fair shares of cache misses (pkg/dns fairness.ts), as an operator sees them: a log line
// when an asker starts and stops being limited (its pod's namespace, and namespace/name, where the program knows them), and
// bounded metrics: the misses dropped, whether misses are shared now, how many askers are limited,
// and the ten limited askers that lost the most. Nothing that grows with the number of clients.

import type { Registry } from '../metrics/registry.ts';
import { Fairness } from '../dns/fairness.ts';
import type { Asker, FairnessOptions } from '../dns/fairness.ts';
import type { Logger } from '../log/log.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';

/** Rows of the top table. */
export const TOP_LIMITED = 10;

export interface FairShareOptions {
  /** The flags' values (pkg/flags fairShareSettings); null: never share, and no Fairness made. */
  settings: { busyAt: number; floorPerSecond: number } | null;
  log: Logger;
  /** Whose Client Subnet names the asker (our own caches in front). */
  trustsSubnetOf?: FairnessOptions['trustsSubnetOf'];
  /** Misses in flight from which they are shared too (FairnessOptions.slots). */
  slots?: number;
  /** What else the log line says of an asker (its pod's namespace). */
  describe?: (address: string) => Record<string, string>;
  /** The asker's pod as namespace/name, looked up when it starts being limited (null: not known); the line waits for it. */
  podOf?: (address: string) => Promise<string | null>;
  /** Where the metrics go, named `<prefix>_fair_share_*`; none: logs only. */
  metrics?: { registry: Registry; prefix: string };
}

export function fairShare(o: FairShareOptions): Fairness | null {
  if (o.settings === null) return null;
  const log = o.log.child('fair-share');
  // The pods of the askers limited now (podOf's answers), for the line that lets each go.
  const pods = new Map<string, string>();
  const onLimited = (a: Asker, limited: boolean) => {
    const who = { asker: a.address, ...o.describe?.(a.address), pod: pods.get(a.address) };
    if (!limited) {
      pods.delete(a.address);
      log.info('asker no longer limited', { ...who, dropped: a.droppedNow });
      return;
    }
    const share = fairness.share;
    const line = (pod: string | null) => log.warn('asker limited: its cache misses over a fair share are dropped while the thread is busy', { ...who, pod: pod ?? undefined, share });
    if (o.podOf === undefined) return line(null);
    void o.podOf(a.address).then((pod) => {
      if (pod !== null && a.limited) pods.set(a.address, pod);
      line(pod);
    });
  };
  const fairness = new Fairness({ ...o.settings, trustsSubnetOf: o.trustsSubnetOf, slots: o.slots, onLimited });
  if (o.metrics !== undefined) register(o.metrics.registry, o.metrics.prefix, fairness);
  return fairness;
}

function register(registry: Registry, prefix: string, f: Fairness): void {
  const name = (n: string) => `${prefix}_fair_share_${n}`;
  mirroredCounter(registry, { name: name('dropped_total'), help: "Cache misses dropped for exceeding their asker's fair share while the answering thread was busy." }, () => [[{}, f.stats.dropped]]);
  mirroredGauge(registry, { name: name('sharing'), help: '1 while cache misses are shared between askers (the thread busy past --fair-share-busy).' }, () => [[{}, f.shared ? 1 : 0]]);
  mirroredGauge(registry, { name: name('limited_askers'), help: 'Askers limited now (misses over their share dropped within the last second).' }, () => [[{}, f.limited().length]]);
  mirroredGauge(registry, { name: name('steered_flows'), help: 'Flooding UDP flows (source address and port) moved to a receive queue of their own, so the port\'s queue stays short for everyone else.' }, () => [[{}, f.steeredFlows]]);
  if (f.slots > 0) mirroredGauge(registry, { name: name('inflight_limit'), help: "Cache misses in flight (forwarded, answers awaited) from which they are shared between askers: the forwarder's slots, fewer while the upstream's answers queue." }, () => [[{}, f.slotLimit]]);
  mirroredGauge(registry, { name: name('top_dropped'), help: `The ${TOP_LIMITED} limited askers that lost the most misses since they were limited, by rank.`, labelNames: ['rank', 'asker'] }, () =>
    f.limited().slice(0, TOP_LIMITED).map((a, i) => [{ rank: String(i + 1), asker: a.address }, a.droppedNow] as const),
  );
}
