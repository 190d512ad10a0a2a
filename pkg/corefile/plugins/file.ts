// `file DBFILE [ZONES...] { reload DURATION; fallthrough [ZONES...] }`: a zone file served for the
// block's zones (or those written), reloaded every minute unsaid when its SOA serial changes, as
// CoreDNS's file plugin. The file is read here once, so that one that does not read is an error at
// this line, at start and at reload. `reload_by_mtime` and DNSSEC are not served.

const { readFileSync } = process.getBuiltinModule('node:fs');
import { normalizeDomain } from '../../config/config.ts';
import { parseZoneFile } from '../../zonefile/parse.ts';
import type { ZoneFileOptions } from '../../zonefile/handler.ts';
import { duration, invalid, unserved, written } from '../args.ts';
import type { Directive } from '../read.ts';

const RELOAD_DEFAULT_MS = 60_000;
const zoneOf = (z: string) => (z === '.' ? '' : normalizeDomain(z));

export function fileOptions(d: Directive, blockZone: string): ZoneFileOptions {
  if (d.args.length === 0) throw invalid(d, 'needs a zone file');
  const f: ZoneFileOptions = { file: d.args[0], zones: d.args.length > 1 ? d.args.slice(1).map(zoneOf) : [blockZone], reloadMs: RELOAD_DEFAULT_MS, fallthrough: [] };
  for (const o of d.block ?? []) {
    if (o.name === 'reload' && o.args.length === 1 && o.block === null) f.reloadMs = duration(o, o.args[0], 'reload');
    else if (o.name === 'fallthrough' && o.block === null) f.fallthrough = o.args.length === 0 ? [''] : o.args.map(zoneOf);
    else throw unserved(o, `file option \`${written(o)}\``);
  }
  let text: string;
  try {
    text = readFileSync(f.file, 'utf8');
  } catch (err) {
    throw invalid(d, `cannot read ${f.file}: ${(err as Error).message}`);
  }
  for (const z of f.zones) {
    try {
      parseZoneFile(text, z);
    } catch (err) {
      throw invalid(d, `${f.file}: ${(err as Error).message}`);
    }
  }
  return f;
}
