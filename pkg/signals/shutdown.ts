// The one way our programs stop: SIGTERM (the kubelet) or SIGINT (Ctrl-C) runs `stop` once — stop
// accepting, let work in flight finish — then exits 0, or 1 when stopping failed. A program started
// by one of our supervisors (the nanny, npm start's launcher) also stops so when that supervisor is
// gone: Node has no PR_SET_PDEATHSIG, so it watches its parent pid instead.

import type { Logger } from '../log/log.ts';

/**
 * Set in a child's environment by our supervisors (pkg/nanny's Supervisor): the supervisor's pid. A
 * program started any other way (a shell, a container's PID 1) never watches its parent.
 */
export const SUPERVISOR_ENV = 'KUBE_DNS_TS_SUPERVISOR';
/** How often the parent pid is read (one getppid call). */
const ORPHAN_CHECK_MS = 500;

export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const begin = (fields: Record<string, unknown>): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', fields);
    stop().then(
      () => process.exit(0),
      (err: Error) => {
        log.error('shutdown failed', { err: err.message });
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => begin({ signal }));
  watchSupervisor(() => begin({ reason: 'supervisor gone' }));
}

/** Calls `gone` once when the supervisor that started this process has died (we were re-parented). */
function watchSupervisor(gone: () => void): void {
  const supervisor = Number(process.env[SUPERVISOR_ENV]);
  // Not inherited by anything this process starts in turn.
  delete process.env[SUPERVISOR_ENV];
  if (!(supervisor > 0) || process.ppid !== supervisor) return;
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return;
    clearInterval(timer);
    gone();
  }, ORPHAN_CHECK_MS);
  timer.unref();
}
