// kube-dns (built dist/, production Node flags) and CoreDNS (kubernetes plugin), both reading the same
// kube-apiserver through a kubeconfig, bound to 127.0.0.1 on free ports. Time to ready is measured from spawn
// to the first 200 of the server's own readiness endpoint (kube-dns /readiness, CoreDNS's ready plugin).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
export { corednsBin, corednsVersions } from '../test/e2e/harness/coredns.ts';
import { startDaemon, logTail } from '../test/e2e/harness/daemon.ts';
import type { Daemon } from '../test/e2e/harness/daemon.ts';
import { freePort } from '../test/helpers/ports.ts';
import { oneThread, productionNodeFlags, repoRoot } from './servers.ts';

export class BenchServerError extends Error {
  code = 'BENCH_ERR_SERVER';
}

export interface ApiDnsServer {
  name: string;
  daemon: Daemon;
  port: number;
  /** Milliseconds from spawn to the first ready answer. */
  readyMs: number;
  /** kube-dns's /metrics port (undefined for CoreDNS). */
  httpPort?: number;
}

async function waitReady(daemon: Daemon, url: string, startedAt: number, timeoutMs = 120_000): Promise<number> {
  for (;;) {
    if (!daemon.running()) throw new BenchServerError(`${daemon.name} exited before ready:\n${logTail(daemon.logFile)}`);
    const ok = await fetch(url).then((r) => r.status === 200, () => false);
    if (ok) return performance.now() - startedAt;
    if (performance.now() - startedAt > timeoutMs) throw new BenchServerError(`${daemon.name}: not ready in ${timeoutMs} ms:\n${logTail(daemon.logFile)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** kube-dns from `root`'s dist/ (another checkout's, to compare builds), named `name` in reports; `nodeFlags` instead of its bin's. */
export async function startKubeDnsApi(dir: string, kubeconfig: string, o: { root?: string; name?: string; args?: string[]; nodeFlags?: string[] } = {}): Promise<ApiDnsServer> {
  const root = o.root ?? repoRoot;
  const name = o.name ?? 'kube-dns';
  const port = await freePort();
  const httpPort = await freePort();
  writeFileSync(join(dir, 'resolv.conf'), 'nameserver 127.0.0.1\n');
  const startedAt = performance.now();
  const daemon = startDaemon(process.execPath, [
    ...(o.nodeFlags ?? productionNodeFlags('kube-dns', root)),
    join(root, 'dist/cmd/kube-dns/main.js'),
    `--kubecfg-file=${kubeconfig}`,
    '--dns-bind-address=127.0.0.1',
    '--http-bind-address=127.0.0.1',
    `--dns-port=${port}`,
    `--healthz-port=${httpPort}`,
    `--resolv-conf=${join(dir, 'resolv.conf')}`,
    ...oneThread(root),
    ...(o.args ?? []),
  ], join(dir, `${name.replace(/\W+/g, '-')}.log`));
  return { ...(await whenReady(name, daemon, port, `http://127.0.0.1:${httpPort}/readiness`, startedAt)), httpPort };
}

export async function startCoreDns(bin: string, dir: string, kubeconfig: string): Promise<ApiDnsServer> {
  const port = await freePort();
  const readyPort = await freePort();
  const corefile = join(dir, 'Corefile');
  // The kubernetes plugin alone, as kube-dns answers only the cluster zone here; no cache, as kube-dns has none.
  writeFileSync(corefile, `.:${port} {\n  bind 127.0.0.1\n  ready 127.0.0.1:${readyPort}\n  kubernetes cluster.local {\n    kubeconfig ${kubeconfig}\n  }\n}\n`);
  const startedAt = performance.now();
  const daemon = startDaemon(bin, ['-conf', corefile], join(dir, 'coredns.log'));
  return whenReady('coredns', daemon, port, `http://127.0.0.1:${readyPort}/ready`, startedAt);
}

/**
 * CoreDNS with one server block on a free port: `body` is the block's plugins (besides bind and
 * ready), e.g. `file <zone file> cluster.local` or `cache 30` + `forward . 127.0.0.1:<port>`.
 */
export async function startCoreDnsWith(bin: string, dir: string, name: string, body: string): Promise<ApiDnsServer> {
  const port = await freePort();
  const readyPort = await freePort();
  const corefile = join(dir, `Corefile-${name}`);
  writeFileSync(corefile, `.:${port} {\n  bind 127.0.0.1\n  ready 127.0.0.1:${readyPort}\n${body.trim().split('\n').map((l) => `  ${l}`).join('\n')}\n}\n`);
  const startedAt = performance.now();
  const daemon = startDaemon(bin, ['-conf', corefile], join(dir, `${name}.log`));
  return whenReady(name, daemon, port, `http://127.0.0.1:${readyPort}/ready`, startedAt);
}

/**
 * A server given a whole Corefile (CoreDNS, or kube-dns -conf): `argv` runs it (`-conf <file>` added),
 * `readyUrl` is its ready endpoint as the Corefile sets it.
 */
export async function startWithCorefile(name: string, argv: string[], dir: string, corefile: string, port: number, readyUrl: string): Promise<ApiDnsServer> {
  const file = join(dir, `Corefile-${name.replace(/\W+/g, '-')}`);
  writeFileSync(file, corefile);
  const startedAt = performance.now();
  const daemon = startDaemon(argv[0], [...argv.slice(1), '-conf', file], join(dir, `${name.replace(/\W+/g, '-')}.log`));
  return whenReady(name, daemon, port, readyUrl, startedAt);
}

/** Waits for the server's readiness URL; a server that never gets ready is stopped. */
async function whenReady(name: ApiDnsServer['name'], daemon: Daemon, port: number, url: string, startedAt: number): Promise<ApiDnsServer> {
  try {
    return { name, daemon, port, readyMs: await waitReady(daemon, url, startedAt) };
  } catch (err) {
    await daemon.stop();
    throw err;
  }
}
