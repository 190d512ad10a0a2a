// `rewrite [continue|stop] name [exact|prefix|suffix|substring|regex] FROM TO [answer auto|name FROM TO|value FROM TO]...`
// and its block form `rewrite [continue|stop] { name ...; answer ... }` (the block's words read as
// one line, as CoreDNS reads them): one name rule per use, normalized as CoreDNS normalizes it (FROM
// and TO lowercased and fully qualified, a regex as written). Rules of other fields (type, class,
// edns0, ttl, cname, rcode) and `metadata` are refused (not served).

import { applyRegexSyntax } from '../../rewrite/regex.ts';
import { regexRewrite } from '../../rewrite/rules.ts';
import type { AnswerRewrite, NameMatch, NameRule } from '../../rewrite/rules.ts';
import { invalid, unserved } from '../args.ts';
import type { Directive } from '../read.ts';

const MATCHES: readonly NameMatch[] = ['exact', 'prefix', 'suffix', 'substring', 'regex'];
const OTHER_FIELDS = ['type', 'class', 'edns0', 'ttl', 'cname', 'rcode'];
/** CoreDNS's cap on a pattern's length. */
const MAX_REGEX_LENGTH = 10_000;

/** plugin.Name(s).Normalize(): lowercase, fully qualified. */
const normalize = (s: string) => {
  const lower = s.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
};

/** The words of a use: its arguments, or with fewer than two, its block's words after them. */
function words(d: Directive): string[] {
  if (d.args.length >= 2 || d.block === null) return d.args;
  const out = [...d.args];
  for (const o of d.block) {
    if (o.block !== null) throw invalid(o, 'a block inside a rewrite block');
    out.push(o.name, ...o.args);
  }
  return out;
}

export function rewriteRule(d: Directive): NameRule {
  const args = words(d);
  if (d.args.length >= 2 && d.block !== null) throw invalid(d, 'takes a rule on its line or in its block, not both');
  if (args.length === 0) throw invalid(d, 'no rule type specified');
  const first = args[0].toLowerCase();
  const mode = first === 'continue' ? 'continue' : 'stop';
  const rest = first === 'continue' || first === 'stop' ? args.slice(1) : args;
  if (rest.length === 0) throw invalid(d, `a ${first} rule must begin with a rule type`);
  const field = rest[0].toLowerCase();
  if (OTHER_FIELDS.includes(field)) throw unserved(d, `a rewrite rule of the ${field} field`);
  if (field === 'answer') throw invalid(d, 'response rewrites must begin with a name rule');
  if (field !== 'name') throw invalid(d, `invalid rule type ${JSON.stringify(rest[0])}`);
  return nameRule(d, mode, rest.slice(1));
}

function nameRule(d: Directive, mode: NameRule['mode'], args: string[]): NameRule {
  if (args.length < 2) throw invalid(d, 'too few arguments for a name rule');
  const match = (args.length === 2 ? 'exact' : args[0].toLowerCase()) as NameMatch;
  if (!MATCHES.includes(match)) throw invalid(d, `a name rule matches exact, prefix, suffix, substring or regex, not ${JSON.stringify(args[0])}`);
  const [fromText, toText] = args.length === 2 ? args : args.slice(1, 3);
  if (args[3] === 'metadata') throw unserved(d, 'a rewrite rule with metadata');
  const { auto, answers } = answerRules(d, args.slice(3));
  const to = normalize(toText);
  if (match !== 'regex') return { mode, match, from: normalize(fromText), pattern: null, to, auto: auto || match === 'exact', answers };
  const pattern = compile(d, fromText, toText);
  return { mode, match, from: fromText, pattern, to, auto, answers };
}

/** A Go (RE2) pattern as a RegExp; refuses what does not compile or uses more groups in `to` than it has. */
function compile(d: Directive, from: string, to: string): RegExp {
  if (from.length > MAX_REGEX_LENGTH) throw invalid(d, `regex pattern too long: ${from.length} > ${MAX_REGEX_LENGTH}`);
  let pattern: RegExp;
  try {
    pattern = applyRegexSyntax(from);
  } catch {
    throw invalid(d, `invalid regex matching pattern: ${from}`);
  }
  const groups = new RegExp(`${pattern.source}|`, pattern.flags).exec('')!.length - 1;
  let used = 0;
  for (let i = 0; i <= 100; i++) if (to.includes(`{${i}}`)) used++;
  if (used > groups) throw invalid(d, `the rewrite regex pattern (${to}) uses more subexpressions than its corresponding matching regex pattern (${from})`);
  return pattern;
}

/** `answer auto`, `answer name FROM TO`, `answer value FROM TO`, the word `answer` optional after the first. */
function answerRules(d: Directive, args: string[]): { auto: boolean; answers: AnswerRewrite[] } {
  const answers: AnswerRewrite[] = [];
  let auto = false;
  let names = 0;
  if (args.length === 0) return { auto, answers };
  if (args.length < 2 || args[0] !== 'answer') throw invalid(d, `${args.join(' ')}: answer rules begin with \`answer\``);
  for (let i = 0; i < args.length; ) {
    if (args[i] === 'answer') i++;
    const kind = args[i++];
    if (kind === 'auto') {
      auto = true;
      continue;
    }
    if (kind !== 'name' && kind !== 'value') throw invalid(d, `invalid type ${JSON.stringify(kind ?? '')} for an answer rule`);
    if (args.length - i < 2) throw invalid(d, `${kind} answer rule: 2 arguments required`);
    answers.push({ kind, written: `${args[i]} ${args[i + 1]}`, rewrite: regexRewrite(compile(d, args[i], args[i + 1]), normalize(args[i + 1])) });
    if (kind === 'name') names++;
    i += 2;
  }
  if (auto && names > 0) throw invalid(d, 'auto name answer rule cannot be combined with explicit name answer rules');
  return { auto, answers };
}
