// `template CLASS TYPE [ZONES...] { match REGEX...; answer RR; additional RR; authority RR; rcode CODE;
// fallthrough [ZONES...] }`: as CoreDNS reads it (zones: the block's unsaid; match `.*` unsaid; rcode
// NOERROR unsaid). RRs are Go templates of the actions pkg/template serves; `var`, `expr`, `ederror`
// and other actions are refused (not served).

import { normalizeDomain } from '../../config/config.ts';
import { RR_TEXT_TYPES } from '../../dns/rr-text.ts';
import { classNumber, rcodeNumber, typeNumber } from '../../querylog/names.ts';
import { applyRegexSyntax } from '../../rewrite/regex.ts';
import { compileTemplate } from '../../template/go-template.ts';
import type { CompiledTemplate } from '../../template/go-template.ts';
import type { TemplateRule } from '../../template/rules.ts';
import { invalid, unserved, written, writtenWhole } from '../args.ts';
import type { Directive } from '../read.ts';

const zoneOf = (z: string) => (z === '.' ? '' : normalizeDomain(z));
const MAX_REGEX_LENGTH = 10_000;

export function templateRule(d: Directive, blockZone: string): TemplateRule {
  if (d.args.length < 2) throw invalid(d, 'needs a class and a type');
  const qclass = classNumber(d.args[0]);
  const qtype = typeNumber(d.args[1]);
  if (qclass === undefined) throw invalid(d, `invalid query class ${JSON.stringify(d.args[0])}`);
  if (qtype === undefined) throw invalid(d, `invalid RR type ${JSON.stringify(d.args[1])}`);
  const t: TemplateRule = { qclass, qtype, zones: d.args.length > 2 ? d.args.slice(2).map(zoneOf) : [blockZone], regex: [], answer: [], additional: [], authority: [], rcode: 0, fallthrough: null, written: writtenWhole(d) };
  for (const o of d.block ?? []) {
    if (o.block !== null) throw invalid(o, 'a block inside template');
    if (o.name === 'match' && o.args.length > 0) t.regex.push(...o.args.map((r) => regexOf(o, r)));
    else if ((o.name === 'answer' || o.name === 'additional' || o.name === 'authority') && o.args.length === 1) t[o.name].push(rrTemplate(o, o.args[0]));
    else if (o.name === 'rcode' && o.args.length === 1) t.rcode = rcodeOf(o);
    else if (o.name === 'fallthrough') t.fallthrough = o.args.length === 0 ? [''] : o.args.map(zoneOf);
    else if (o.name === 'upstream') continue; // CoreDNS reads and ignores it: a CNAME is always followed.
    else throw unserved(o, `template option \`${written(o)}\``);
  }
  if (t.regex.length === 0) t.regex.push(/.*/);
  return t;
}

function regexOf(o: Directive, pattern: string): RegExp {
  if (pattern.length > MAX_REGEX_LENGTH) throw invalid(o, `regex pattern too long: ${pattern.length} > ${MAX_REGEX_LENGTH}`);
  try {
    return applyRegexSyntax(pattern);
  } catch {
    throw invalid(o, `invalid regex ${JSON.stringify(pattern)}`);
  }
}

function rcodeOf(o: Directive): number {
  const rcode = rcodeNumber(o.args[0]);
  if (rcode === undefined) throw invalid(o, `unknown rcode ${JSON.stringify(o.args[0])}`);
  return rcode;
}

/** An RR template: its actions compiled, and its type (when written plainly) one that is served. */
function rrTemplate(o: Directive, text: string): CompiledTemplate {
  let compiled: CompiledTemplate;
  try {
    compiled = compileTemplate(text);
  } catch (err) {
    throw unserved(o, (err as Error).message);
  }
  // The type is the first plain word after the name, TTL and class: checked here when not templated.
  const plain = text.replace(/\{\{.*?\}\}/g, 'x').trim().split(/\s+/);
  const type = plain.slice(1, 4).find((w) => !/^\d+$/.test(w) && !['IN', 'CH', 'HS', 'ANY'].includes(w.toUpperCase()));
  if (type !== undefined && RR_TEXT_TYPES[type.toUpperCase()] === undefined) throw unserved(o, `a template record of type ${type}`);
  return compiled;
}
