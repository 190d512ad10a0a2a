// CoreDNS's rewrite name rules (plugin/rewrite name.go), on names as CoreDNS sees them: lowercase,
// fully qualified (`web.example.org.`, the root `.`). A rule that matches gives the new question name
// and the rewrites its reply gets back (applied last rule first, to every record's owner name or, for
// `value` ones, to the name a record points to).

export type NameMatch = 'exact' | 'prefix' | 'suffix' | 'substring' | 'regex';

/** One rewrite of a reply's names: owners (`name`) or targets (`value`: CNAME, PTR, NS, SRV, MX, SOA's mname). */
export interface AnswerRewrite {
  kind: 'name' | 'value';
  /** As written (`(.*)\.svc\. {1}.example.`): what tells two plans apart. */
  written?: string;
  rewrite(name: string): string;
}

export interface NameRule {
  /** `stop` (CoreDNS's default): no later rule is tried once this one matched. */
  mode: 'stop' | 'continue';
  match: NameMatch;
  /** The name, prefix, suffix or substring matched (normalized as CoreDNS does); for `regex`, the pattern's text. */
  from: string;
  pattern: RegExp | null;
  to: string;
  /** `answer auto` (always for `exact`): the reply's names mapped back from the new name to the asked one. */
  auto: boolean;
  /** `answer name|value FROM TO`, as written. */
  answers: AnswerRewrite[];
}

/** `{0}`, `{1}`... of `template` from a regex match (Go's FindStringSubmatch: an unmatched group is empty). */
function expand(template: string, groups: RegExpExecArray): string {
  let s = template;
  for (let i = 0; i < groups.length; i++) s = s.replaceAll(`{${i}}`, groups[i] ?? '');
  return s;
}

/** A regex rewriter: a name the pattern matches becomes `to` with the groups put in; others stay. */
export function regexRewrite(pattern: RegExp, to: string): (name: string) => string {
  return (name) => {
    const m = pattern.exec(name);
    return m === null ? name : expand(to, m);
  };
}

/** The name `from`, or a name below it, gets `to` in its place. */
function remap(from: string, to: string): (name: string) => string {
  return (name) => {
    if (name === from) return to;
    const i = name.length - from.length;
    return i > 0 && name[i - 1] === '.' && name.endsWith(from) ? name.slice(0, i) + to : name;
  };
}

function suffixSwap(suffix: string, to: string): (name: string) => string {
  return (name) => (name.endsWith(suffix) ? name.slice(0, name.length - suffix.length) + to : name);
}

/** The new name when `rule` matches `name`, else null. */
function rewritten(rule: NameRule, name: string): string | null {
  switch (rule.match) {
    case 'exact':
      return name === rule.from ? rule.to : null;
    case 'prefix':
      return name.startsWith(rule.from) ? rule.to + name.slice(rule.from.length) : null;
    case 'suffix':
      return name.endsWith(rule.from) ? name.slice(0, name.length - rule.from.length) + rule.to : null;
    case 'substring':
      return name.includes(rule.from) ? name.replaceAll(rule.from, rule.to) : null;
    case 'regex': {
      const m = rule.pattern!.exec(name);
      return m === null ? null : expand(rule.to, m);
    }
  }
}

/** What `rule` makes of a question for `name`: the new name and the rewrites of its reply; null when it does not match. */
export function applyRule(rule: NameRule, name: string): { name: string; answers: AnswerRewrite[] } | null {
  const to = rewritten(rule, name);
  if (to === null) return null;
  if (!rule.auto) return { name: to, answers: rule.answers };
  // A suffix rule's way back swaps the suffixes; the others map the new name back to the asked one.
  const back = rule.match === 'suffix' ? suffixSwap(rule.to, rule.from) : remap(to, name);
  return { name: to, answers: [{ kind: 'name', rewrite: back }, { kind: 'value', rewrite: back }, ...rule.answers] };
}

/** Whether `name` (fully qualified) is a domain name: labels of 1-63 bytes, 255 in all on the wire. */
export function isDomainName(name: string): boolean {
  if (name === '.') return true;
  if (!name.endsWith('.') || name.startsWith('.') || name.includes('..')) return false;
  // Escapes (\.) make labels hard to count here; the encoder refuses what is not a name.
  if (name.includes('\\')) return true;
  return Buffer.byteLength(name) + 1 <= 255 && name.slice(0, -1).split('.').every((l) => Buffer.byteLength(l) <= 63);
}
