// A kubeconfig file for one token: what kube-dns, kubectl and the cluster tier's components read.

import { writeFileSync } from 'node:fs';

/**
 * Writes a kubeconfig for `token` at `server`, trusting `caFile`, to `path` (JSON is YAML); returns
 * `path`. `name` names its cluster, user and context (kube-dns logs the user's).
 */
export function writeKubeconfig(path: string, server: string, caFile: string, token: string, name: string): string {
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  }, null, 2), { mode: 0o600 });
  return path;
}
