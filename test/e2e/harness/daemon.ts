// A long-running binary (etcd, kube-apiserver) as a child process whose output goes to a log file, stopped
// by pid. Every live daemon is also killed when the test process exits, so a test killed by a timeout does
// not leave servers behind.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export class DaemonError extends Error {
  code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface Daemon {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves when the process has exited, with its code or signal. */
  readonly exited: Promise<string>;
  running(): boolean;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export function startDaemon(bin: string, args: string[], logFile: string): Daemon {
  const name = basename(bin);
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new DaemonError('E2E_ERR_SPAWN', `could not start ${bin}`);
  live.add(child);
  let gone = false;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => {
      gone = true;
      live.delete(child);
      resolve(`error ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      gone = true;
      live.delete(child);
      resolve(signal ? `signal ${signal}` : `code ${code}`);
    });
  });
  return {
    name,
    pid: child.pid,
    logFile,
    exited,
    running: () => !gone,
    async stop(graceMs = 10_000) {
      if (gone) return;
      signal(child.pid!, 'SIGTERM');
      const timer = setTimeout(() => {
        if (!gone) signal(child.pid!, 'SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Sends a signal by pid; a process that has just exited on its own is not an error. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** The last `lines` lines of a log file, for error messages. */
export function logTail(logFile: string, lines = 40): string {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return '(no log)';
  }
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
