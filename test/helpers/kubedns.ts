// Starts the real kube-dns program on loopback with a cluster file of the test's own (or, without one,
// with the API source the test's args point at).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { startProgram } from './process.ts';
import type { Program } from './process.ts';

export interface KubeDns {
  program: Program;
  dnsPort: number;
  httpPort: number;
  clusterFile: string;
  dir: string;
}

export interface KubeDnsStart {
  /** The cluster file's content; undefined → no --cluster-file (the API source, given by args). */
  clusterYaml?: string;
  args?: string[];
  /** Wait for the first sync (default true). */
  synced?: boolean;
  env?: NodeJS.ProcessEnv;
  /** A command kube-dns runs under (`taskset -c 0`). */
  wrap?: string[];
}

export async function startKubeDns(t: Test, o: KubeDnsStart): Promise<KubeDns> {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-kubedns-'));
  // Registered first, so it runs last: after kube-dns has stopped.
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clusterFile = o.clusterYaml === undefined ? '' : join(dir, 'cluster.yaml');
  if (clusterFile) writeFileSync(clusterFile, o.clusterYaml!);
  const program = startProgram(t, 'kube-dns', [
    ...(clusterFile ? [`--cluster-file=${clusterFile}`] : []),
    '--dns-bind-address=127.0.0.1',
    '--http-bind-address=127.0.0.1',
    '--dns-port=0',
    '--healthz-port=0',
    `--resolv-conf=${join(dir, 'resolv.conf')}`,
    ...(o.args ?? []),
  ], o.env, o.wrap);
  const dns = await program.waitFor(/DNS listening .*port=(\d+)/);
  const http = await program.waitFor(/HTTP listening .*port=(\d+)/);
  if (o.synced !== false) await program.waitFor(/initial sync done/);
  return { program, dnsPort: Number(dns[1]), httpPort: Number(http[1]), clusterFile, dir };
}

/** Builds `kubectl get -o yaml`-style objects as one multi-document YAML stream. */
export function yamlDocs(...docs: string[]): string {
  return docs.map((d) => d.trim()).join('\n---\n') + '\n';
}

export function service(ns: string, name: string, spec: string, extraMeta = ''): string {
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${ns}${extraMeta}
spec:
${spec.trim().split('\n').map((l) => '  ' + l).join('\n')}`;
}

export function endpointSlice(ns: string, service: string, name: string, addressType: string, body: string): string {
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
    kubernetes.io/service-name: ${service}
addressType: ${addressType}
${body.trim()}`;
}
