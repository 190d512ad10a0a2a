// The Corefile's syntax (CoreDNS's Caddyfile dialect) as node-cache's template uses it: server blocks
// `key [key...] {`, directives one per line with their arguments, an optional `{ ... }` of
// sub-directives, `#` comments. Every token keeps its line, so a later check can name it. No snippets,
// imports or environment placeholders: the template has none, and an unserved line must be an error.

import { CorefileError } from './errors.ts';

export interface Directive {
  name: string;
  args: string[];
  /** Sub-directives of a `{ ... }` block; null when the directive has none. */
  block: Directive[] | null;
  line: number;
}

export interface ServerBlock {
  /** As written: `cluster.local:53`, `.:53`, `dns://in-addr.arpa:53`. */
  keys: string[];
  directives: Directive[];
  line: number;
}

interface Token {
  text: string;
  line: number;
  /** The first token on its line (a directive begins there). */
  first: boolean;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    const code = raw.replace(/(^|\s)#.*$/, '$1');
    let first = true;
    // `{` and `}` are tokens of their own even when glued to a word (`cluster.local:53{`).
    for (const m of code.matchAll(/[{}]|[^\s{}]+/g)) {
      tokens.push({ text: m[0], line, first });
      first = false;
    }
  });
  return tokens;
}

/** Parses a Corefile; throws CorefileError naming the line of the first problem. */
export function parseCorefile(text: string): ServerBlock[] {
  const tokens = tokenize(text);
  const blocks: ServerBlock[] = [];
  let i = 0;
  while (i < tokens.length) {
    const line = tokens[i].line;
    const keys: string[] = [];
    while (i < tokens.length && tokens[i].text !== '{') {
      if (tokens[i].text === '}') throw new CorefileError('COREFILE_SYNTAX', tokens[i].line, 'a `}` closes nothing');
      keys.push(tokens[i++].text.replace(/,$/, ''));
    }
    if (i >= tokens.length) throw new CorefileError('COREFILE_SYNTAX', line, `server block ${keys.join(' ')} has no \`{\``);
    i++;
    const [directives, next] = parseDirectives(tokens, i, line);
    blocks.push({ keys, directives, line });
    i = next;
  }
  return blocks;
}

/** Directives from `i` up to the `}` that closes the block opened on `opened`; the index after it. */
function parseDirectives(tokens: Token[], i: number, opened: number): [Directive[], number] {
  const directives: Directive[] = [];
  for (;;) {
    if (i >= tokens.length) throw new CorefileError('COREFILE_SYNTAX', opened, 'the `{` opened here is never closed');
    const t = tokens[i];
    if (t.text === '}') return [directives, i + 1];
    if (t.text === '{') throw new CorefileError('COREFILE_SYNTAX', t.line, 'a `{` without a directive before it');
    const d: Directive = { name: t.text, args: [], block: null, line: t.line };
    i++;
    while (i < tokens.length && !tokens[i].first && tokens[i].text !== '{' && tokens[i].text !== '}') d.args.push(tokens[i++].text);
    if (i < tokens.length && tokens[i].text === '{' && tokens[i].line === d.line) {
      [d.block, i] = parseDirectives(tokens, i + 1, d.line);
    }
    directives.push(d);
  }
}
