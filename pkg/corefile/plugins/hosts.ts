// `hosts [FILE [ZONES...]] { IP NAME...; ttl SECONDS; no_reverse; reload DURATION; fallthrough [ZONES...] }`:
// a hosts file (/etc/hosts unsaid) and lines of the block itself, for the
// block's zones unless others are named. CoreDNS's defaults: TTL 3600 s, the file checked every 5 s.

const { isIP } = process.getBuiltinModule('node:net');
import { normalizeDomain } from '../../config/config.ts';
import { duration, invalid, unserved, wholeNumber, written } from '../args.ts';
import type { Directive } from '../read.ts';

export interface HostsOptions {
  file: string;
  /** Canonical zones; '' is every name. */
  zones: string[];
  /** The block's `IP NAME...` lines. */
  inline: string[];
  ttl: number;
  noReverse: boolean;
  /** ms; 0: the file is read once. */
  reloadMs: number;
  /** Zones whose unknown names go on ('' is every zone); empty: none. */
  fallthrough: string[];
}

const zone = (z: string) => (z === '.' ? '' : normalizeDomain(z));

export function hostsOptions(d: Directive, blockZone: string): HostsOptions {
  const h: HostsOptions = { file: d.args[0] ?? '/etc/hosts', zones: d.args.length > 1 ? d.args.slice(1).map(zone) : [blockZone], inline: [], ttl: 3600, noReverse: false, reloadMs: 5000, fallthrough: [] };
  for (const o of d.block ?? []) {
    if (isIP(o.name) !== 0 && o.args.length > 0 && o.block === null) h.inline.push(written(o));
    else if (o.name === 'ttl' && o.args.length === 1 && o.block === null) h.ttl = ttlOf(o);
    else if (o.name === 'no_reverse' && o.args.length === 0 && o.block === null) h.noReverse = true;
    else if (o.name === 'reload' && o.args.length === 1 && o.block === null) h.reloadMs = duration(o, o.args[0], 'reload');
    else if (o.name === 'fallthrough' && o.block === null) h.fallthrough = o.args.length === 0 ? [''] : o.args.map(zone);
    else throw unserved(o, `hosts option \`${written(o)}\``);
  }
  return h;
}

function ttlOf(o: Directive): number {
  const ttl = wholeNumber(o, o.args[0], 'the TTL', 0);
  if (ttl > 2 ** 31 - 1) throw invalid(o, 'the TTL is too large');
  return ttl;
}
