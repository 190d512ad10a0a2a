// Where bench/build-coredns.sh puts CoreDNS (the peer the benchmarks and the differential test run
// beside us): the first version built of those it tries, in the cache the e2e binaries use.

import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Newest first, as bench/build-coredns.sh tries them (v1.15.0 builds from the Go module proxy). */
export const corednsVersions = ['v1.15.0', 'v1.13.2', 'v1.13.1'];

/** The CoreDNS binary, or null when none is built. */
export function corednsBin(): string | null {
  const root = process.env.KUBE_DNS_TS_CACHE || join(homedir(), '.cache', 'kube-dns-ts');
  for (const v of corednsVersions) {
    const bin = join(root, `coredns-${v}`, 'bin', 'coredns');
    try {
      accessSync(bin, constants.X_OK);
      return bin;
    } catch {
      // not built at this version
    }
  }
  return null;
}
