// Server blocks → one plan per zone, through a program's table of the plugins it serves. The table is
// in CoreDNS's order (order.ts), and so is the planning: each block's directives are applied in the
// table's order whatever order they were written in, a plugin used twice in its written order. A
// name the table lacks is refused at its line: "not served by <program>" for a CoreDNS plugin, "no
// CoreDNS plugin" for anything else. The core knows no plugin by name: a plugin is its file and its
// line in a table.

import { CorefileError } from './errors.ts';
import { zoneKey } from './keys.ts';
import type { ZoneKey } from './keys.ts';
import { COREDNS_ORDER } from './order.ts';
import type { Directive, ServerBlock } from './read.ts';

export interface Plugin<Z> {
  /** Its name in CoreDNS's plugin.cfg. */
  name: string;
  /** One use of the plugin in a block, applied to that block's zone plan; throws CorefileError naming the line. */
  setup(d: Directive, zone: Z): unknown;
}

export interface PlanOptions<Z> {
  /** The program, for messages: `node-cache`. */
  program: string;
  /** The plugins it serves, in CoreDNS's order. */
  plugins: readonly Plugin<Z>[];
  /** -dns.port: the port of a key that names none. */
  defaultPort: number;
  /** A new zone plan for one key of `block`. */
  zone(key: ZoneKey, block: ServerBlock): Z;
  /** Checks a zone plan once every directive was applied (throws CorefileError). */
  done?(zone: Z, block: ServerBlock): void;
}

/** One plan per server block key, in the order written; throws CorefileError at the first line that cannot be served. */
export function planBlocks<Z>(blocks: readonly ServerBlock[], o: PlanOptions<Z>): Z[] {
  const rank = new Map(o.plugins.map((p, i) => [p.name, i]));
  const served = o.plugins.map((p) => p.name).join(', ');
  const zones: Z[] = [];
  const seen = new Set<string>();
  for (const block of blocks) {
    for (const d of block.directives) {
      if (rank.has(d.name)) continue;
      if (COREDNS_ORDER.includes(d.name)) throw new CorefileError('COREFILE_UNSUPPORTED', d, `the plugin \`${d.name}\` is not served by ${o.program} (it serves: ${served})`);
      throw new CorefileError('COREFILE_UNSUPPORTED', d, `\`${d.name}\` is no CoreDNS plugin (${o.program} serves: ${served})`);
    }
    const ordered = [...block.directives].sort((a, b) => rank.get(a.name)! - rank.get(b.name)!);
    for (const key of block.keys) {
      const k = zoneKey(key, block, o.defaultPort);
      if (seen.has(`${k.zone}:${k.port}`)) throw new CorefileError('COREFILE_INVALID', block, `zone ${k.zone || '.'} on port ${k.port} has a server block already`);
      seen.add(`${k.zone}:${k.port}`);
      const zone = o.zone(k, block);
      for (const d of ordered) o.plugins[rank.get(d.name)!].setup(d, zone);
      o.done?.(zone, block);
      zones.push(zone);
    }
  }
  if (zones.length === 0) throw new CorefileError('COREFILE_INVALID', 1, 'no server block');
  return zones;
}
