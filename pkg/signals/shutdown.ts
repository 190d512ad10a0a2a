// The one way our programs stop. SIGTERM (the kubelet's) first turns the program unready and keeps it
// serving for its lame-duck time, so kube-proxy moves the clients' flows elsewhere before anything
// closes; then `stop` — stop accepting, let work in flight finish — and exit 0, or 1 when stopping
// failed. SIGINT (Ctrl-C at a terminal: nobody routes around a foreground process) and a supervisor
// that is gone stop at once, also in the middle of a lame duck. A program started by one of our
// supervisors (the nanny, npm start's launcher) watches its parent pid: Node has no PR_SET_PDEATHSIG.

import type { Logger } from '../log/log.ts';

/**
 * Set in a child's environment by our supervisors (pkg/nanny's Supervisor): the supervisor's pid. A
 * program started any other way (a shell, a container's PID 1) never watches its parent.
 */
export const SUPERVISOR_ENV = 'KUBE_DNS_TS_SUPERVISOR';
/** How often the parent pid is read (one getppid call). */
const ORPHAN_CHECK_MS = 500;
/** An orphan's stop may take this long; past it the process exits all the same (nobody supervises it). */
const ORPHAN_STOP_MS = 5000;

/**
 * The supervisor that started this process (0: none), read when this module loads, a program's first
 * moments: one that dies while the program still starts is noticed too. Our supervisors start our
 * programs directly, so it is the parent, and the parent changing is its death; one that is not the
 * parent (a wrapper in between, or already dead and we re-parented) is watched by its pid instead.
 */
const supervisor = Number(process.env[SUPERVISOR_ENV]) > 0 ? Number(process.env[SUPERVISOR_ENV]) : 0;
const supervisorIsParent = supervisor > 0 && process.ppid === supervisor;
// Not inherited by anything this process starts in turn.
delete process.env[SUPERVISOR_ENV];

/** Whether the supervisor still runs: our parent still, or a process of its pid. */
function supervisorAlive(): boolean {
  if (supervisorIsParent) return process.ppid === supervisor;
  try {
    process.kill(supervisor, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface Shutdown {
  stop(): Promise<void>;
  /** SIGTERM: how long to keep serving, unready, before `stop`. 0 or absent: none. */
  lameDuckMs?: number;
  /** At SIGTERM, before the lame duck: readiness fails from here on. */
  lameDuck?(): void;
  /**
   * Called at SIGTERM too: the lame duck lasts at least lameDuckMs and until this settles (with why,
   * for the log). Absent: lameDuckMs alone.
   */
  lameDuckUntil?(): Promise<string>;
}

export function stopOnSignals(log: Logger, shutdown: Shutdown): void {
  let stopping = false;
  let lameDuck: NodeJS.Timeout | null = null;
  const begin = (fields: Record<string, unknown>): void => {
    if (lameDuck !== null) clearTimeout(lameDuck);
    if (stopping) return;
    stopping = true;
    log.info('shutting down', fields);
    shutdown.stop().then(
      () => process.exit(0),
      (err: Error) => {
        log.error('shutdown failed', { err: err.message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => {
    if (stopping || lameDuck !== null) return;
    const ms = shutdown.lameDuckMs ?? 0;
    if (ms <= 0) return begin({ signal: 'SIGTERM' });
    shutdown.lameDuck?.();
    log.info('lame duck: unready, still serving', { signal: 'SIGTERM', for: `${ms}ms${shutdown.lameDuckUntil ? ' at least' : ''}` });
    const until = shutdown.lameDuckUntil?.();
    const end = () => begin({ signal: 'SIGTERM', after: 'lame duck' });
    lameDuck = setTimeout(() => {
      if (until === undefined) return end();
      until.then(
        (why) => begin({ signal: 'SIGTERM', after: `lame duck (${why})` }),
        () => end(),
      );
    }, ms);
  });
  process.on('SIGINT', () => begin({ signal: 'SIGINT' }));
  watchSupervisor(() => {
    begin({ reason: 'supervisor gone' });
    setTimeout(() => {
      log.error('still stopping: exiting without its supervisor', { afterMs: ORPHAN_STOP_MS });
      process.exit(1);
    }, ORPHAN_STOP_MS).unref();
  });
}

/** Calls `gone` once when the supervisor that started this process has died, at once if it died while we started. */
function watchSupervisor(gone: () => void): void {
  if (supervisor === 0) return;
  const check = (): boolean => {
    if (supervisorAlive()) return false;
    gone();
    return true;
  };
  if (check()) return;
  const timer = setInterval(() => check() && clearInterval(timer), ORPHAN_CHECK_MS);
  timer.unref();
}
