// Real stub resolvers for client-behaviour tests: test/clients/lookup.c built with gcc (glibc's
// getaddrinfo) and musl-gcc (musl's), and test/clients/lookup.go built with Go (its own resolver, as a
// CGO_ENABLED=0 binary uses). Each binary takes names and prints `name address` lines, `name: error`
// for a failure. Built once per test process into a temp dir (a second or two; Go's first build ~7 s).

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { repoRoot } from './process.ts';

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
