// Where build-binaries.sh caches the Kubernetes binaries, and whether they are there. The version here and
// the script's default must agree: the cache is keyed by it.

import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const k8sVersion = 'v1.36.3';

export const buildScript = 'test/e2e/harness/build-binaries.sh';

/** Where the test tools are cached: $KUBE_DNS_TS_CACHE, or ~/.cache/kube-dns-ts (the build scripts agree). */
export function cacheRoot(): string {
  return process.env.KUBE_DNS_TS_CACHE || join(homedir(), '.cache', 'kube-dns-ts');
}

export function binDir(): string {
  return join(cacheRoot(), `k8s-${k8sVersion}`, 'bin');
}

/** A binary build-binaries.sh builds (`--cluster` for all but kube-apiserver and etcd). */
export const k8sBin = (name: string): string => join(binDir(), name);
export const kubeApiserverBin = (): string => k8sBin('kube-apiserver');
export const etcdBin = (): string => k8sBin('etcd');

/** What the cluster tier runs beyond kube-apiserver and etcd (build-binaries.sh --cluster). */
export const CLUSTER_BINARIES = ['kubelet', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler', 'kubectl', 'agnhost', 'e2e.test'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** kube-apiserver and etcd (and `extra`) built and executable; otherwise why not, with the command that builds them. */
export function binariesAvailable(extra: readonly string[] = []): { ok: boolean; why?: string } {
  const missing = ['kube-apiserver', 'etcd', ...extra].map(k8sBin).filter((p) => !executable(p));
  if (missing.length === 0) return { ok: true };
  return { ok: false, why: `not built: ${missing.join(', ')} (run: bash ${buildScript}${extra.length > 0 ? ' --cluster' : ''}, needs Go)` };
}

/** Go on PATH or in its usual place: the build script can run. */
export function goAvailable(): boolean {
  const dirs = (process.env.PATH ?? '').split(':').filter(Boolean);
  return [...dirs, '/usr/local/go/bin'].some((d) => existsSync(join(d, 'go')));
}
