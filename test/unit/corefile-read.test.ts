// The one Corefile reader (pkg/corefile) as CoreDNS reads a Corefile: tokens, quotes and comments,
// environment placeholders, imports (files and globs relative to the importing file, at the top and
// inside a block; snippets), and the planner applying plugins in CoreDNS's order, not the order
// written. Every refusal names its file and line.

import t from 'tap';
import type { Test } from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorefileError } from '../../pkg/corefile/errors.ts';
import { planBlocks } from '../../pkg/corefile/plan.ts';
import { parseCorefile, readCorefile } from '../../pkg/corefile/read.ts';
import type { Directive, ServerBlock } from '../../pkg/corefile/read.ts';

/** A directive as `name args...` and its block's lines the same way. */
const shape = (d: Directive): unknown => (d.block === null ? [d.name, ...d.args].join(' ') : { [[d.name, ...d.args].join(' ')]: d.block.map(shape) });
const shapes = (blocks: ServerBlock[]) => blocks.map((b) => ({ keys: b.keys, directives: b.directives.map(shape) }));

/** A folder of files (path → text) for the test, removed after it. */
function files(t: Test, tree: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

t.test('tokens: quotes keep spaces and \\", # starts a comment anywhere outside quotes, keys continue after a comma', async (t) => {
  const blocks = parseCorefile('example.org:1053,\n  example.net {\n  template IN A {\n    answer "{{ .Name }} 60 IN A 1.2.3.4" # a comment\n    match "^a\\"b#c$"\n  }\n  log#no space needed\n}\n');
  t.same(shapes(blocks), [{ keys: ['example.org:1053', 'example.net'], directives: [{ 'template IN A': ['answer {{ .Name }} 60 IN A 1.2.3.4', 'match ^a"b#c$'] }, 'log'] }]);
  t.equal(blocks[0].directives[1].line, 7, 'every directive keeps its line');
});

t.test('{$NAME} and {%NAME%} from the environment in keys and arguments; unset is empty', async (t) => {
  const env = { ZONE: 'example.org', UP: '10.0.0.1' };
  const blocks = parseCorefile('{$ZONE}:53 {\n  forward . {%UP%}:53 {$UNSET}\n}\n', { env });
  t.same(blocks[0].keys, ['example.org:53']);
  t.same(blocks[0].directives[0].args, ['.', '10.0.0.1:53', ''], 'an unset variable is an empty argument, as CoreDNS reads it');
});

t.test('a lone block may leave out its braces (CoreDNS does); a second may not', async (t) => {
  t.same(shapes(parseCorefile('.:53\nerrors\nforward . 1.1.1.1\n')), [{ keys: ['.:53'], directives: ['errors', 'forward . 1.1.1.1'] }]);
  t.throws(() => parseCorefile('.:53 {\n}\nexample.org\nerrors\n'), { code: 'COREFILE_SYNTAX', message: /^Corefile line 3: server block example\.org has no `\{`/ });
});

t.test('import: a file and a glob relative to the Corefile folder, at the top and inside a block, in sorted order', async (t) => {
  const dir = files(t, {
    Corefile: '.:53 {\n  errors\n  import custom/*.override\n}\nimport custom/*.server\nimport extra.conf\n',
    'custom/b.override': 'log\n',
    'custom/a.override': 'hosts {\n  fallthrough\n}\n',
    'custom/z.server': 'example.org:53 {\n  forward . 10.0.0.1\n}\n',
    'extra.conf': 'example.net:53 {\n  import nested/inner\n}\n',
    // An import in an imported file is relative to that file's folder.
    'nested/inner': 'forward . 10.0.0.2\n',
  });
  t.same(shapes(readCorefile(join(dir, 'Corefile'))), [
    { keys: ['.:53'], directives: ['errors', { hosts: ['fallthrough'] }, 'log'] },
    { keys: ['example.org:53'], directives: ['forward . 10.0.0.1'] },
    { keys: ['example.net:53'], directives: ['forward . 10.0.0.2'] },
  ]);
});

t.test('import: a glob that matches nothing is a warning, as CoreDNS; a missing file, two wildcards, a loop are errors at the line', async (t) => {
  const dir = files(t, { Corefile: '.:53 {\n  import custom/*.override\n}\n', 'loop.conf': 'import loop.conf\n' });
  const warnings: string[] = [];
  t.same(shapes(readCorefile(join(dir, 'Corefile'), { warn: (m) => warnings.push(m) })), [{ keys: ['.:53'], directives: [] }]);
  t.same(warnings, ['Corefile line 2: import custom/*.override matched no files']);
  const refused: [string, RegExp][] = [
    ['.:53 {\n  errors\n  import missing.conf\n}\n', /^Corefile line 3: import \S+missing\.conf: no such file/],
    ['import */*.server\n', /^Corefile line 1: import \*\/\*\.server: one wildcard \(\*\) at most/],
    ['import loop.conf\n', /^\S+loop\.conf line 1: more than 1000 imports/],
    ['import\n', /^Corefile line 1: import needs a file/],
    ['import a b\n', /^Corefile line 1: import takes one file/],
  ];
  for (const [text, message] of refused) t.throws(() => parseCorefile(text, { path: join(dir, 'Corefile') }), { code: 'COREFILE_SYNTAX', message }, text);
});

t.test("an imported file's error names that file and its line", async (t) => {
  const dir = files(t, { Corefile: '.:53 {\n}\nimport bad.server\n', 'bad.server': 'ok.org {\n}\nbad.org{\n}\n' });
  const err = t.throws(() => readCorefile(join(dir, 'Corefile'))) as CorefileError;
  t.equal(err.file, join(dir, 'bad.server'));
  t.equal(err.line, 3);
  t.equal(err.message, `${join(dir, 'bad.server')} line 3: server block key "bad.org{": a brace must stand apart, after a space`);
});

t.test('snippets: (name) { ... } defined once, imported by name', async (t) => {
  const text = '(common) {\n  errors\n  cache 30\n}\n.:53 {\n  import common\n  forward . 1.1.1.1\n}\nexample.org {\n  import common\n}\n';
  t.same(shapes(parseCorefile(text)), [
    { keys: ['.:53'], directives: ['errors', 'cache 30', 'forward . 1.1.1.1'] },
    { keys: ['example.org'], directives: ['errors', 'cache 30'] },
  ]);
  t.throws(() => parseCorefile('(a) {\n}\n(a) {\n}\n'), { message: /^Corefile line 3: snippet a is defined twice/ });
});

t.test("the planner applies a block's plugins in CoreDNS's order, not the order written, and names what it refuses", async (t) => {
  const applied: string[] = [];
  const plugins = ['errors', 'cache', 'forward'].map((name) => ({ name, setup: (d: Directive, z: string[]) => z.push(`${d.name} ${d.args.join(' ')}`) }));
  const plan = (text: string) => planBlocks(parseCorefile(text), { program: 'test', plugins, defaultPort: 53, zone: () => applied.splice(0) && applied });
  const zones = plan('.:53 example.org:5353 {\n  forward . 1.1.1.1\n  cache 30\n  errors\n  forward . 1.1.1.2\n}\n');
  t.same(zones, [
    ['errors ', 'cache 30', 'forward . 1.1.1.1', 'forward . 1.1.1.2'],
    ['errors ', 'cache 30', 'forward . 1.1.1.1', 'forward . 1.1.1.2'],
  ], 'each key its own zone plan, every plugin in the order of CoreDNS plugin.cfg, one used twice as written');
  t.throws(() => plan('.:53 {\n  errors\n  rewrite name a b\n}\n'), { code: 'COREFILE_UNSUPPORTED', message: /^Corefile line 3: the plugin `rewrite` is not served by test \(it serves: errors, cache, forward\)/ });
  t.throws(() => plan('.:53 {\n  cahce 30\n}\n'), { code: 'COREFILE_UNSUPPORTED', message: /^Corefile line 2: `cahce` is no CoreDNS plugin/ });
  t.throws(() => plan('.:53 {\n}\n.:53 {\n}\n'), { code: 'COREFILE_INVALID', message: /^Corefile line 3: zone \. on port 53 has a server block already/ });
  t.throws(() => plan('# nothing\n'), { code: 'COREFILE_INVALID', message: /no server block/ });
});
