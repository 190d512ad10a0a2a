// A zone file (RFC 1035 §5) → its records: `$ORIGIN`, `$TTL`, `@`, names relative to the origin, an
// owner left blank for the one before, `(` ... `)` across lines, `;` comments. The SOA's owner must be
// the zone, as CoreDNS requires. `$INCLUDE` and `$GENERATE` are refused. Throws ZoneFileError naming
// the line.

import { normalizeDomain } from '../config/config.ts';
import { Type } from '../dns/constants.ts';
import type { ResourceRecord } from '../dns/message.ts';
import { RrTextError, rrFromText } from '../dns/rr-text.ts';

export class ZoneFileError extends Error {
  readonly code = 'ZONE_FILE_INVALID';
}

/** Logical lines: comments dropped, a parenthesised run joined into one; each with the line it began on. */
function logicalLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let open: { line: number; text: string } | null = null;
  text.split('\n').forEach((raw, i) => {
    const body = raw.replace(/;(?=(?:[^"]*"[^"]*")*[^"]*$).*$/, '');
    if (open !== null) {
      open.text += ` ${body}`;
    } else {
      open = { line: i + 1, text: body };
    }
    const depth = (open.text.match(/\(/g)?.length ?? 0) - (open.text.match(/\)/g)?.length ?? 0);
    if (depth <= 0) {
      out.push({ line: open.line, text: open.text.replace(/[()]/g, ' ') });
      open = null;
    }
  });
  if (open !== null) throw new ZoneFileError(`line ${(open as { line: number }).line}: a \`(\` is never closed`);
  return out.filter((l) => l.text.trim() !== '');
}

/** The records of the zone file `text` for `zone` (canonical; '' the root). */
export function parseZoneFile(text: string, zone: string): ResourceRecord[] {
  let origin = zone;
  let ttl: number | undefined;
  let owner: string | null = null;
  const records: ResourceRecord[] = [];
  for (const { line, text: l } of logicalLines(text)) {
    const fail = (message: string) => new ZoneFileError(`line ${line}: ${message}`);
    const directive = /^\$(\w+)\s+(\S+)/.exec(l);
    if (directive !== null) {
      const [, name, arg] = directive;
      if (name === 'ORIGIN') origin = arg === '.' ? '' : normalizeDomain(arg.endsWith('.') ? arg : origin === '' ? arg : `${arg}.${origin}`);
      else if (name === 'TTL' && /^\d+$/.test(arg)) ttl = Number(arg);
      else throw fail(`$${name} ${arg} is not served`);
      continue;
    }
    // A line that starts with blank space belongs to the owner before it.
    const blankOwner = /^\s/.test(l);
    if (blankOwner && owner === null) throw fail('a record without an owner');
    const full = blankOwner ? `${owner === '' ? '.' : `${owner}.`} ${l.trim()}` : l.trim();
    let rr: ResourceRecord;
    try {
      rr = rrFromText(full, { origin, ttl });
    } catch (err) {
      throw fail(err instanceof RrTextError ? err.message : String(err));
    }
    rr.name = rr.name.toLowerCase();
    owner = rr.name;
    records.push(rr);
  }
  const soa = records.find((r) => r.type === Type.SOA);
  if (soa === undefined) throw new ZoneFileError(`no SOA record for ${zone || '.'}`);
  if (soa.name !== zone) throw new ZoneFileError(`the SOA's owner ${soa.name || '.'} is not the zone ${zone || '.'}`);
  return records;
}
