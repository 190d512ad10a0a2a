// Go's RE2 patterns (what a Corefile's regex is written in) as JavaScript RegExps: the syntax they
// differ in for names is translated; what has no equivalent throws.

/** `pattern` (RE2) compiled: `(?P<name>` → `(?<name>`, leading `(?i)`/`(?s)` → flags, `\A` and `\z` → `^` and `$`. */
export function applyRegexSyntax(pattern: string): RegExp {
  // RE2 has no lookaround or backreference: a pattern using them would not load in CoreDNS either.
  if (/\(\?[=!]|\(\?<[=!]|\\[1-9]/.test(pattern)) throw new SyntaxError('lookaround and backreferences are not RE2');
  let source = pattern;
  let flags = '';
  const lead = /^\(\?([is]+)\)/.exec(source);
  if (lead !== null) {
    flags = [...new Set(lead[1])].join('');
    source = source.slice(lead[0].length);
  }
  // Without the m flag JavaScript's ^ and $ are RE2's \A and \z.
  source = source.replaceAll('(?P<', '(?<').replace(/(?<!\\)\\A/g, '^').replace(/(?<!\\)\\z/g, '$');
  return new RegExp(source, flags);
}
