// Whether an e2e test can run here. In CI (CI=true) the binaries must exist: a missing build is a failure,
// never a silent skip. Elsewhere a machine without Go skips, loudly.

import type { Test } from 'tap';
import { binariesAvailable, goAvailable } from './binaries.ts';

/** True when the test may go on; otherwise it has failed or skipped `t` with the reason. */
export function e2eCanRun(t: Test): boolean {
  const bins = binariesAvailable();
  if (bins.ok) return true;
  if (process.env.CI === 'true') {
    t.fail(`e2e binaries missing in CI: ${bins.why}`);
    return false;
  }
  if (!goAvailable()) {
    const why = `SKIPPING e2e tests: Go is not installed, so kube-apiserver/etcd cannot be built (${bins.why})`;
    console.error(`\n*** ${why} ***\n`);
    t.skip(why, () => {});
    return false;
  }
  t.fail(`e2e binaries missing (npm test builds them first, in pretest): ${bins.why}`);
  return false;
}
