// Real stub resolvers for client-behaviour tests: test/clients/lookup.c built with gcc (glibc's
// getaddrinfo) and musl-gcc (musl's), and test/clients/lookup.go built with Go (its own resolver, as a
// CGO_ENABLED=0 binary uses). Each binary takes names and prints `name address` lines, `name: error`
// for a failure. Built once per test process into a temp dir (a second or two; Go's first build ~7 s).

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { eventually } from './eventually.ts';
import { repoRoot } from './process.ts';

const run = promisify(execFile);

export type ResolverKind = 'glibc' | 'musl' | 'go';
export const RESOLVERS: readonly ResolverKind[] = ['glibc', 'musl', 'go'];

const GO = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';

function build(kind: ResolverKind, out: string): void {
  const src = join(repoRoot, 'test/clients');
  if (kind === 'glibc') execFileSync('gcc', ['-O2', '-o', out, join(src, 'lookup.c')], { stdio: 'pipe' });
  else if (kind === 'musl') execFileSync('musl-gcc', ['-O2', '-static', '-o', out, join(src, 'lookup.c')], { stdio: 'pipe' });
  else execFileSync(GO, ['build', '-o', out, join(src, 'lookup.go')], { stdio: 'pipe', cwd: tmpdir(), env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '' } });
}

/**
 * The resolvers' binaries that could be built; the test fails for one that could not in CI (gcc,
 * musl-tools and Go are installed there: .ci/run), and elsewhere goes on without it, saying so.
 */
export function buildResolvers(t: Test): Map<ResolverKind, string> {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-resolvers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const built = new Map<ResolverKind, string>();
  for (const kind of RESOLVERS) {
    const out = join(dir, `lookup-${kind}`);
    try {
      build(kind, out);
      built.set(kind, out);
    } catch (err) {
      const why = `cannot build the ${kind} resolver client: ${(err as Error).message.split('\n')[0]}`;
      if (process.env.CI === 'true') t.fail(why);
      else console.error(`\n*** SKIPPING the ${kind} client: ${why} ***\n`);
    }
  }
  return built;
}

/**
 * One lookup of `name` by `binary` in the client pod's network namespace: its sorted addresses (or
 * 'not found') and the queries `queries()` counted for it (a server's query log, read until it stops
 * growing: every query is logged before its answer leaves, the pipe may still hold the last lines).
 */
export async function countedLookup(netns: string, binary: string, name: string, queries: () => number): Promise<{ result: string; queries: number }> {
  const before = queries();
  const r = await run('ip', ['netns', 'exec', netns, binary, name], { timeout: 30_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const lines = r.stdout.trim().split('\n');
  const result = lines.some((l) => l.includes(': ')) ? 'not found' : [...new Set(lines.map((l) => l.split(' ')[1]))].sort().join(',');
  let seen = 0;
  await eventually(async () => {
    const n = queries() - before;
    const stable = n === seen && n > 0;
    seen = n;
    if (!stable) await new Promise((resolve) => setTimeout(resolve, 100));
    return stable;
  }, `the queries of ${name} logged`, 5000);
  return { result, queries: seen };
}
