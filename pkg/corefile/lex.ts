// The Corefile's tokens, as CoreDNS's Caddy lexer cuts them: words between whitespace; a `"..."` token
// may hold spaces and newlines (`\"` is a quote); `#` starts a comment to the end of the line, also
// inside a word, never inside quotes. `{` and `}` are tokens only when they stand alone. Each token
// keeps its file and line, so a later check can name it.

import type { Place } from './errors.ts';
import { CorefileError } from './errors.ts';

export interface Token extends Place {
  text: string;
  /** A quoted token: never a brace, never a directive's `import`. */
  quoted: boolean;
  /** The line it ends on (a quoted token may hold newlines). */
  end: number;
}

/**
 * The tokens of `text`, every `{$NAME}` and `{%NAME%}` in them replaced from `env`; `file`: the
 * imported file it came from (null: the Corefile).
 */
export function lex(text: string, file: string | null, env: Readonly<Record<string, string | undefined>>): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\n') line++;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (ch === '"') {
      const start = line;
      let value = '';
      for (i++; ; i++) {
        if (i >= text.length) throw new CorefileError('COREFILE_SYNTAX', { file, line: start }, 'a `"` that is never closed');
        if (text[i] === '\\' && text[i + 1] === '"') {
          value += '"';
          i++;
        } else if (text[i] === '"') {
          break;
        } else {
          if (text[i] === '\n') line++;
          value += text[i];
        }
      }
      i++;
      tokens.push({ text: expandEnv(value, env), quoted: true, file, line: start, end: line });
    } else {
      const start = i;
      while (i < text.length && !/\s/.test(text[i]) && text[i] !== '#') i++;
      tokens.push({ text: expandEnv(text.slice(start, i), env), quoted: false, file, line, end: line });
    }
  }
  return tokens;
}

/** `{$NAME}` and `{%NAME%}` replaced by the variable (unset: empty), as CoreDNS does in every token. */
export function expandEnv(text: string, env: Readonly<Record<string, string | undefined>>): string {
  if (!text.includes('{$') && !text.includes('{%')) return text;
  return text.replace(/\{\$([^}]+)\}|\{%([^%]+)%\}/g, (_m, a: string | undefined, b: string | undefined) => env[a ?? b ?? ''] ?? '');
}
