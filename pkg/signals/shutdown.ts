// The one way our programs stop: SIGTERM (the kubelet) or SIGINT (Ctrl-C) runs `stop` once — stop
// accepting, let work in flight finish — then exits 0, or 1 when stopping failed.

import type { Logger } from '../log/log.ts';

export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info('shutting down', { signal });
      stop().then(
        () => process.exit(0),
        (err: Error) => {
          log.error('shutdown failed', { error: err.message });
          process.exit(1);
        },
      );
    });
  }
}
