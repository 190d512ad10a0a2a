// A Corefile as CoreDNS reads it (its Caddy parser), into server blocks of directives:
// - a block is `key [key...] {` ... `}`: keys on one line (a trailing comma continues them on the
//   next); a lone block may leave out its braces;
// - a directive is a line: its name, its arguments, and an optional `{ ... }` of sub-directives opened
//   on the same line, one a line;
// - `import PATTERN` on a line of its own, at the top or inside a block, is replaced by the files it
//   names: relative to the folder of the file it is in, one wildcard at most (CoreDNS's limit), a
//   glob that matches nothing a warning and a missing plain path an error, as CoreDNS; or by a
//   snippet, `(name) { ... }` defined before it;
// - `{$NAME}` and `{%NAME%}` are the environment's (lex.ts), `#` a comment, `"..."` one token.
// Every directive keeps its file and line, so the planner can name the line it refuses.

const { globSync, readFileSync, statSync } = process.getBuiltinModule('node:fs');
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { CorefileError } from './errors.ts';
import type { Place } from './errors.ts';
import { lex } from './lex.ts';
import type { Token } from './lex.ts';

export interface Directive extends Place {
  name: string;
  args: string[];
  /** Sub-directives of a `{ ... }` block; null when the directive has none. */
  block: Directive[] | null;
}

export interface ServerBlock extends Place {
  /** As written: `cluster.local:53`, `.:53`, `dns://in-addr.arpa:53`. */
  keys: string[];
  directives: Directive[];
}

export interface ReadOptions {
  /** The Corefile's own path: what its relative imports are relative to (default: the working directory). */
  path?: string;
  /** For `{$NAME}` (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** An import glob that matched no file (CoreDNS warns and goes on). */
  warn?: (message: string) => void;
}

/** More expansions than this is an import that imports itself. */
const MAX_EXPANSIONS = 1000;

/** Reads the Corefile at `path` and every file it imports; throws CorefileError naming the line. */
export function readCorefile(path: string, opts: Omit<ReadOptions, 'path'> = {}): ServerBlock[] {
  return parseCorefile(readFileSync(path, 'utf8'), { ...opts, path });
}

/** Parses a Corefile's text; throws CorefileError naming the line of the first problem. */
export function parseCorefile(text: string, opts: ReadOptions = {}): ServerBlock[] {
  const env = opts.env ?? process.env;
  return new Reader(lex(text, null, env), opts, env).blocks();
}

const where = (t: Place) => ({ file: t.file, line: t.line });
const syntax = (t: Place, message: string) => new CorefileError('COREFILE_SYNTAX', where(t), message);

class Reader {
  private readonly tokens: Token[];
  private readonly opts: ReadOptions;
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly snippets = new Map<string, Token[]>();
  private expansions = 0;
  private i = 0;

  constructor(tokens: Token[], opts: ReadOptions, env: Readonly<Record<string, string | undefined>>) {
    this.tokens = tokens;
    this.opts = opts;
    this.env = env;
  }

  blocks(): ServerBlock[] {
    const blocks: ServerBlock[] = [];
    while (this.i < this.tokens.length) {
      if (this.spliceImport()) continue;
      const first = this.tokens[this.i];
      const keys = this.keys();
      const opens = this.peek('{');
      if (keys.length === 1 && /^\(.+\)$/.test(keys[0])) {
        if (!opens) throw syntax(first, `snippet ${keys[0]} has no \`{\``);
        this.defineSnippet(keys[0].slice(1, -1), first);
        continue;
      }
      if (opens) {
        this.i++;
        blocks.push({ keys, directives: this.directives(first), ...where(first) });
      } else if (blocks.length === 0) {
        // CoreDNS's lone block without braces: everything after its keys is its directives.
        blocks.push({ keys, directives: this.directives(null), ...where(first) });
      } else {
        throw syntax(first, `server block ${keys.join(' ')} has no \`{\``);
      }
    }
    return blocks;
  }

  /** The keys from here to the `{` or the end of the line (a trailing comma goes on to the next line). */
  private keys(): string[] {
    const keys: string[] = [];
    let more = true;
    while (this.i < this.tokens.length && !this.peek('{') && (more || !this.startsLine(this.i))) {
      const t = this.tokens[this.i++];
      if (!t.quoted && t.text === '}') throw syntax(t, 'a `}` closes nothing');
      more = t.text.endsWith(',');
      const key = more ? t.text.slice(0, -1) : t.text;
      // CoreDNS takes `example.net{` for a zone named so, and the block for one without braces.
      if (!t.quoted && /[{}]/.test(key)) throw syntax(t, `server block key ${JSON.stringify(key)}: a brace must stand apart, after a space`);
      if (key !== '') keys.push(key);
    }
    return keys;
  }

  /** Directives up to the `}` that closes the block `opened` (null: up to the end of the text). */
  private directives(opened: Token | null): Directive[] {
    const directives: Directive[] = [];
    for (;;) {
      if (this.i >= this.tokens.length) {
        if (opened === null) return directives;
        throw syntax(opened, 'the `{` opened here is never closed');
      }
      if (this.spliceImport()) continue;
      const t = this.tokens[this.i];
      if (this.peek('}')) {
        if (opened === null) throw syntax(t, 'a `}` closes nothing');
        this.i++;
        return directives;
      }
      if (this.peek('{')) throw syntax(t, 'a `{` without a directive before it');
      this.i++;
      const d: Directive = { name: t.text, args: [], block: null, ...where(t) };
      while (this.i < this.tokens.length && !this.startsLine(this.i) && !this.peek('{') && !this.peek('}')) d.args.push(this.tokens[this.i++].text);
      if (this.peek('{') && !this.startsLine(this.i)) {
        const open = this.tokens[this.i++];
        d.block = this.directives(open);
      }
      directives.push(d);
    }
  }

  /** Whether token `i` is the first of its line (of its file). */
  private startsLine(i: number): boolean {
    const prev = this.tokens[i - 1];
    const t = this.tokens[i];
    return prev === undefined || prev.file !== t.file || prev.end !== t.line;
  }

  /** Whether the token here is the unquoted `text`. */
  private peek(text: string): boolean {
    const t = this.tokens[this.i];
    return t !== undefined && !t.quoted && t.text === text;
  }

  /** An `import PATTERN` line here: replaced by what it names; false when the line is none. */
  private spliceImport(): boolean {
    const t = this.tokens[this.i];
    if (t.quoted || t.text !== 'import' || !this.startsLine(this.i)) return false;
    const arg = this.tokens[this.i + 1];
    if (arg === undefined || this.startsLine(this.i + 1)) throw syntax(t, 'import needs a file, a glob or a snippet');
    if (this.tokens[this.i + 2] !== undefined && !this.startsLine(this.i + 2)) throw syntax(t, 'import takes one file, glob or snippet');
    if (++this.expansions > MAX_EXPANSIONS) throw syntax(t, `more than ${MAX_EXPANSIONS} imports: does a file or snippet import itself?`);
    this.tokens.splice(this.i, 2, ...this.imported(arg));
    return true;
  }

  /** The tokens `import` brings: a snippet's, or those of every file its pattern matches. */
  private imported(arg: Token): Token[] {
    const snippet = this.snippets.get(arg.text);
    if (snippet !== undefined) return snippet;
    const base = arg.file !== null ? dirname(arg.file) : this.opts.path !== undefined ? dirname(resolve(this.opts.path)) : process.cwd();
    const pattern = isAbsolute(arg.text) ? arg.text : join(base, arg.text);
    const wildcards = (pattern.match(/[*?]/g) ?? []).length + (/\[.*\]/.test(pattern) ? 2 : 0);
    if (wildcards > 1) throw syntax(arg, `import ${arg.text}: one wildcard (*) at most, as CoreDNS`);
    const files = wildcards === 1 ? globSync(pattern).sort() : [pattern];
    if (wildcards === 1 && files.length === 0) {
      this.opts.warn?.(`${arg.file ?? 'Corefile'} line ${arg.line}: import ${arg.text} matched no files`);
      return [];
    }
    return files.flatMap((file) => {
      let text: string;
      try {
        if (statSync(file).isDirectory()) throw syntax(arg, `import ${file}: a directory`);
        text = readFileSync(file, 'utf8');
      } catch (err) {
        if (err instanceof CorefileError) throw err;
        throw syntax(arg, `import ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
      }
      return lex(text, resolve(file), this.env);
    });
  }

  /** `(name) { ... }` from here (its `{`): its tokens kept for `import name`. */
  private defineSnippet(name: string, at: Token): void {
    if (this.snippets.has(name)) throw syntax(at, `snippet ${name} is defined twice`);
    const start = ++this.i;
    let depth = 1;
    for (; this.i < this.tokens.length && depth > 0; this.i++) {
      if (this.peek('{')) depth++;
      else if (this.peek('}')) depth--;
    }
    if (depth > 0) throw syntax(at, 'the `{` opened here is never closed');
    this.snippets.set(name, this.tokens.slice(start, this.i - 1));
  }
}
