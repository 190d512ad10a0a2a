// Starts our programs as real child processes (Node 24 runs the TypeScript entry points directly) and
// stops them by pid when the test ends, whatever happened.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { OutputLines } from './log-lines.ts';
import { NO_LAME_DUCK } from '../../pkg/localpod/plan.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface Program {
  child: ChildProcess;
  /** Everything written to stderr and stdout so far, log entries made plain (helpers/log-lines.ts). */
  output(): string;
  /** The same, exactly as written. */
  rawOutput(): string;
  /** Resolves with the first regex match in output(), rejects after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after 5 s; resolves with the exit code (null when killed). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** The programs that keep serving, unready, for --lameduck after SIGTERM (pkg/signals). */
const LAME_DUCKS = new Set(['kube-dns', 'dnsmasq-nanny', 'sidecar']);

/**
 * KUBE_DNS_TS_TEST_WORKERS=N runs every kube-dns and dnscache the tests start (dnscache by itself or
 * under the nanny) with --workers=N: the integration tier runs once so in CI (issue 20: every test at
 * 1 and 2 threads).
 */
export function workersArgs(): string[] {
  // Not auto: the tier runs at a known count, 1 unless asked (a later --workers in a test wins).
  return [`--workers=${testWorkers()}`];
}

/** The threads every kube-dns and dnscache of the tests runs (KUBE_DNS_TS_TEST_WORKERS, else 1). */
export function testWorkers(): number {
  const n = process.env.KUBE_DNS_TS_TEST_WORKERS;
  return n === undefined || n === '' ? 1 : Number(n);
}

/**
 * One of our programs from source; `wrap` runs it through another command (`ip netns exec <ns>`).
 * Tests stop programs with SIGTERM: a program with a lame duck gets none unless `args` set one
 * (a later flag wins).
 */
export function startProgram(t: Test, program: string, args: string[], env: NodeJS.ProcessEnv = {}, wrap: string[] = []): Program {
  const first = [...(LAME_DUCKS.has(program) ? [NO_LAME_DUCK] : []), ...(program === 'dnscache' || program === 'kube-dns' ? workersArgs() : [])];
  return startCommand(t, [...wrap, process.execPath, `${repoRoot}cmd/${program}/main.ts`, ...first, ...args], env, program);
}

/**
 * How `child` ended, once what it wrote is read: 'exit' can come before the last of its output
 * (seen: a program's usage error read as empty), 'close' after its pipes end. A grandchild that
 * kept them open would hold 'close' forever: then a second after 'exit'.
 */
export function outputEnded(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      const timer = setTimeout(() => resolve({ code, signal }), 1000);
      child.once('close', () => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
  });
}

/** Any command (`argv[0]` the file), watched and stopped the same way; `name` for messages. */
export function startCommand(t: Test, argv: string[], env: NodeJS.ProcessEnv = {}, name = argv[0]): Program {
  const program = name;
  const child = spawn(argv[0], argv.slice(1), { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = new OutputLines();
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    lines.push(d.toString());
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = outputEnded(child).then((e) => e.code);
  const p: Program = {
    child,
    output: () => lines.plain(),
    rawOutput: () => lines.raw(),
    exited,
    waitFor(re, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(lines.plain());
          if (m) {
            done();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${re} in output of ${program}:\n${lines.plain()}`));
        }, ms);
        let waiting = true;
        const done = () => {
          waiting = false;
          clearTimeout(timer);
          waiters.delete(check);
        };
        void exited.then(() => {
          if (!waiting) return;
          check();
          done();
          reject(new Error(`${program} exited while waiting for ${re}:\n${lines.plain()}`));
        });
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  t.teardown(() => p.stop());
  return p;
}
