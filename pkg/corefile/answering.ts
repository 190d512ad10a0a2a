// The plugins that answer from what they hold, before a program's own engine (kube-dns's cluster and
// forward, node-cache's cache and forward), in CoreDNS's order: any, chaos, rewrite, template, hosts, file.
// One table for both programs: what a block's Corefile lines make of them, chained (pkg/dns chain).

import { anyHandler } from '../any/any.ts';
import { chaosHandler } from '../chaos/chaos.ts';
import type { ChaosAnswers } from '../chaos/chaos.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import { hostsHandler } from '../hosts/handler.ts';
import { HostsTable } from '../hosts/table.ts';
import type { Logger } from '../log/log.ts';
import { rewriteHandler } from '../rewrite/handler.ts';
import type { NameRule } from '../rewrite/rules.ts';
import { templateHandler } from '../template/handler.ts';
import type { TemplateRule } from '../template/rules.ts';
import { ZoneFiles, zoneFileHandler } from '../zonefile/handler.ts';
import type { ZoneFileOptions } from '../zonefile/handler.ts';
import type { AnsweringMetrics } from './answering-metrics.ts';
import { cachedAfter } from './cache-capped.ts';
import type { CacheOptions } from './plugins/cache.ts';
import type { HostsOptions } from './plugins/hosts.ts';

/** A block's answering plugins as planned. */
export interface AnsweringPlan {
  any: boolean;
  /** `chaos`, for the block's names (zones null) or for zones of their own. */
  chaos: { zones: string[] | null; answers: ChaosAnswers }[];
  rewrite: NameRule[];
  template: TemplateRule[];
  hosts: HostsOptions | null;
  /** `file`: zone files, each for its zones, under its own block's cache. */
  file: PlannedZoneFile[];
}

/** A `file` line and the cache of the block it was written in (its replies' TTLs as that cache leaves them). */
export type PlannedZoneFile = ZoneFileOptions & { cache: CacheOptions | null };

export const NO_ANSWERING: AnsweringPlan = { any: false, chaos: [], rewrite: [], template: [], hosts: null, file: [] };

/** One answering plugin: its handler, closed when the plan it came from is replaced or the program stops. */
export interface AnsweringPlugin {
  handler: ChainedHandler;
  close(): void;
  /** The zones it sees (its own block's); absent: the block's names. */
  zones?: string[];
}

/** A plugin after `cache` in CoreDNS's order: its replies' TTLs as that cache leaves them. */
const afterCache = (handler: ChainedHandler, cache: CacheOptions | null) => (cache === null ? handler : cachedAfter(handler, cache));

const stateless = (handler: ChainedHandler): AnsweringPlugin => ({ handler, close: () => undefined });

/** Where a block's plugins count: the program's metrics, and the block's server as CoreDNS names it. */
export interface AnsweringCounts {
  metrics: AnsweringMetrics;
  server: string;
}

/** `p`'s handlers in CoreDNS's order; `cache`: the block's (template's and hosts' TTLs as it leaves them). */
export function answeringPlugins(p: AnsweringPlan, cache: CacheOptions | null, log: Logger, counts?: AnsweringCounts): AnsweringPlugin[] {
  const out: AnsweringPlugin[] = [];
  if (p.any) out.push(stateless(anyHandler));
  for (const c of p.chaos) out.push({ ...stateless(chaosHandler(c.answers)), zones: c.zones ?? undefined });
  if (p.rewrite.length > 0) out.push(stateless(rewriteHandler(p.rewrite)));
  if (p.template.length > 0) out.push(stateless(afterCache(templateHandler(p.template, counts?.metrics.templateMatched(counts.server)), cache)));
  if (p.hosts !== null) {
    const h = p.hosts;
    const table = new HostsTable({ file: h.file, inline: h.inline, noReverse: h.noReverse, reloadMs: h.reloadMs, log: log.child('hosts') });
    const uncount = counts?.metrics.hosts(table);
    const close = () => {
      uncount?.();
      table.close();
    };
    out.push({ handler: afterCache(hostsHandler(table, { zones: h.zones, ttl: h.ttl, fallthrough: h.fallthrough }), cache), close });
  }
  for (const f of p.file) {
    const files = new ZoneFiles(f, log.child('file'));
    out.push({ handler: afterCache(zoneFileHandler(files, f), f.cache), close: () => files.close(), zones: f.zones });
  }
  return out;
}
