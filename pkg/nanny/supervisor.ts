// The child's life: start it, pass its output on, signal it, replace it, and start it again
// after an unexpected exit, with backoff. Too many failures in a short window is a crash loop: then
// the owner is told, and the pod's restart policy takes over. A replacement starts once the old one
// is gone, so it can bind the same port (dnsmasq; kubernetes/dns#419).

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from '../log/log.ts';
import type { ChildCommand } from './exec.ts';
import { SUPERVISOR_ENV } from '../signals/shutdown.ts';

export interface Backoff {
  /** First wait after an unexpected exit; doubled after each, up to maxMs. */
  initialMs: number;
  maxMs: number;
  /** A child that ran this long before exiting starts the backoff over. */
  resetAfterMs: number;
  /** This many failures within failureWindowMs is a crash loop. */
  maxFailures: number;
  failureWindowMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 30_000, resetAfterMs: 60_000, maxFailures: 5, failureWindowMs: 120_000 };

export interface SupervisorOptions {
  command: ChildCommand;
  log: Logger;
  /**
   * Where the child's output lines go, one at a time as written. Default: a line that is already a
   * log entry in our format (dnscache's) is passed on as it is; any other (dnsmasq's) becomes an
   * entry of `log`, so that the nanny's stream stays one format.
   */
  output?: (line: string) => void;
  backoff?: Partial<Backoff>;
  /** SIGKILL a child that has not exited this long after SIGTERM. Default 5000. */
  killAfterMs?: number;
  /** A child whose command has no ready line counts as ready this long after it starts. Default 2000. */
  readyFallbackMs?: number;
  /** The child failed too often: the supervisor has given up and starts nothing more. */
  onCrashLoop(reason: string): void;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** SIGKILLed because it outlived the grace period after SIGTERM. */
  killed: boolean;
  /** Set when the process could not be started at all (ENOENT, EACCES). */
  error?: string;
}

export interface SupervisorStats {
  starts: number;
  /** SIGHUPs sent. */
  reloads: number;
  /** Children replaced for a new command line. */
  configRestarts: number;
  /** Children started again after an unexpected exit. */
  exitRestarts: number;
}

interface Run {
  proc: ChildProcess;
  startedAt: number;
  ready: boolean;
  readyTimer: NodeJS.Timeout | undefined;
  /** A SIGHUP asked for before the child could take it. */
  pendingReload: boolean;
  /** We asked it to stop: its exit is not a failure. */
  expected: boolean;
  killed: boolean;
  ended: boolean;
  exited: Promise<ChildExit>;
}

export function describeExit(e: ChildExit): string {
  if (e.error !== undefined) return `could not start: ${e.error}`;
  if (e.killed) return 'killed (SIGKILL) after the grace period';
  return e.signal !== null ? `signal ${e.signal}` : `exit code ${e.code}`;
}

/**
 * A child that exited with one of `stopCodes` (ChildCommand.stopCodes; 0) or on our SIGTERM stopped
 * cleanly; one killed, failing or never started did not.
 */
export function stoppedCleanly(e: ChildExit | null, stopCodes: readonly number[] = [0]): boolean {
  if (e === null) return true;
  if (e.killed || e.error !== undefined) return false;
  return (e.code !== null && stopCodes.includes(e.code)) || e.signal === 'SIGTERM';
}

export class Supervisor {
  readonly stats: SupervisorStats = { starts: 0, reloads: 0, configRestarts: 0, exitRestarts: 0 };
  private readonly command: ChildCommand;
  private readonly log: Logger;
  private readonly output: (line: string) => void;
  private readonly backoff: Backoff;
  private readonly killAfterMs: number;
  private readonly readyFallbackMs: number;
  private readonly onCrashLoop: (reason: string) => void;
  private args: string[] = [];
  private run: Run | null = null;
  private retryTimer: NodeJS.Timeout | undefined;
  private delayMs: number;
  /** Times of recent unexpected exits. */
  private failures: number[] = [];
  private stopped = false;

  constructor(opts: SupervisorOptions) {
    this.command = opts.command;
    this.log = opts.log;
    this.output = opts.output ?? ((line) => this.log.relay(line));
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.killAfterMs = opts.killAfterMs ?? 5000;
    this.readyFallbackMs = opts.readyFallbackMs ?? 2000;
    this.onCrashLoop = opts.onCrashLoop;
    this.delayMs = this.backoff.initialMs;
  }

  /** A child is running (started, not yet exited). */
  get up(): boolean {
    return this.run !== null && !this.run.ended;
  }

  /** A child that said it is ready runs. */
  get answering(): boolean {
    return this.run !== null && this.run.ready && !this.run.ended;
  }

  get pid(): number | undefined {
    return this.run?.proc.pid;
  }

  start(args: string[]): void {
    this.args = args;
    if (!this.stopped) this.spawnChild();
  }

  /**
   * The child with a new command line: the old one is stopped and gone first (dnsmasq cannot share
   * its port). While a crashed child waits out its backoff, only the arguments change (the retry
   * uses them).
   */
  async restart(args: string[]): Promise<void> {
    this.args = args;
    if (this.run === null || this.stopped) return;
    const old = this.run;
    this.log.info('stopping the child for a restart', { pid: old.proc.pid });
    await this.terminate(old);
    if (this.stopped) return;
    this.stats.configRestarts++;
    this.spawnChild();
  }

  /** SIGHUP: re-read the servers-file. Held until the child is ready; nothing to do with no child. */
  reload(): 'sent' | 'deferred' | 'no child' {
    const run = this.run;
    if (run === null || run.ended) return 'no child';
    if (!run.ready) {
      run.pendingReload = true;
      return 'deferred';
    }
    this.sendReload(run);
    return 'sent';
  }

  /** A signal to a running, ready child (SIGUSR1 for statistics); false when there is none. */
  signal(signal: NodeJS.Signals): boolean {
    const run = this.run;
    if (run === null || run.ended || !run.ready) return false;
    return run.proc.kill(signal);
  }

  /** No more starts; SIGTERM the child and wait for it (SIGKILL after the grace period). null: there was none. */
  async stop(): Promise<ChildExit | null> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    return this.run === null ? null : await this.terminate(this.run);
  }

  private spawnChild(): void {
    const { file, prefix, ready } = this.command;
    // Its own process group: a Ctrl-C to ours reaches only us, and we stop the child in order.
    // SUPERVISOR_ENV: our programs stop by themselves should this process die without stopping them.
    const env = { ...process.env, [SUPERVISOR_ENV]: String(process.pid) };
    const proc = spawn(file, [...prefix, ...this.args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    let settle!: (e: ChildExit) => void;
    const run: Run = {
      proc,
      startedAt: Date.now(),
      ready: false,
      readyTimer: undefined,
      pendingReload: false,
      expected: false,
      killed: false,
      ended: false,
      exited: new Promise((resolve) => (settle = resolve)),
    };
    const finish = (exit: ChildExit) => {
      if (run.ended) return;
      run.ended = true;
      clearTimeout(run.readyTimer);
      settle(exit);
      this.exited(run, exit);
    };
    // A failed spawn has no pid and emits 'error' (an 'exit' may follow: `finish` runs once).
    proc.on('error', (err) => {
      if (proc.pid === undefined) finish({ code: null, signal: null, killed: false, error: err.message });
      else this.log.warn('child process error', { pid: proc.pid, err: err.message });
    });
    proc.once('exit', (code, signal) => finish({ code, signal, killed: run.killed }));
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        this.output(line);
        if (!run.ready && ready !== null && ready.test(line)) this.markReady(run);
      });
    }
    if (ready === null) run.readyTimer = setTimeout(() => this.markReady(run), this.readyFallbackMs);
    this.run = run;
    this.stats.starts++;
    if (proc.pid !== undefined) this.log.info('child started', { pid: proc.pid, command: [file, ...prefix, ...this.args].join(' ') });
  }

  private markReady(run: Run): void {
    if (run.ready || run.ended) return;
    run.ready = true;
    clearTimeout(run.readyTimer);
    if (run.pendingReload) this.sendReload(run);
  }

  private sendReload(run: Run): void {
    run.pendingReload = false;
    if (run.proc.kill('SIGHUP')) this.stats.reloads++;
  }

  private async terminate(run: Run): Promise<ChildExit> {
    run.expected = true;
    if (run.ended) return run.exited;
    run.proc.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (run.ended) return;
      this.log.warn('child did not stop after SIGTERM, killing it', { pid: run.proc.pid, after: `${this.killAfterMs}ms` });
      run.killed = true;
      run.proc.kill('SIGKILL');
    }, this.killAfterMs);
    const exit = await run.exited;
    clearTimeout(timer);
    return exit;
  }

  private exited(run: Run, exit: ChildExit): void {
    if (this.run === run) this.run = null;
    const pid = run.proc.pid;
    if (run.expected || this.stopped) {
      this.log.info('child stopped', { pid, how: describeExit(exit) });
      return;
    }
    const now = Date.now();
    const ranMs = now - run.startedAt;
    this.log.warn('child exited unexpectedly', { pid, how: describeExit(exit), ranFor: `${ranMs}ms` });
    if (ranMs >= this.backoff.resetAfterMs) this.delayMs = this.backoff.initialMs;
    this.failures = this.failures.filter((t) => now - t < this.backoff.failureWindowMs);
    this.failures.push(now);
    if (this.failures.length >= this.backoff.maxFailures) {
      this.stopped = true;
      this.onCrashLoop(`the child failed ${this.failures.length} times within ${this.backoff.failureWindowMs / 1000}s, last: ${describeExit(exit)}`);
      return;
    }
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.backoff.maxMs);
    this.log.info('starting the child again after a backoff', { delay: `${delay}ms` });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.stopped) return;
      this.stats.exitRestarts++;
      this.spawnChild();
    }, delay);
  }
}
