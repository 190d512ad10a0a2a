// A real control plane for end-to-end tests: etcd and kube-apiserver (built by build-binaries.sh) on free
// loopback ports, RBAC on, two static tokens (an admin in system:masters, and the identity of kube-dns's
// ServiceAccount, bound only by the shipped RBAC: manifests/rbac.yaml and manifests/optional/rbac-*.yaml).
// Everything lives in one temp dir; t.teardown stops both processes by pid.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { freePort } from '../../helpers/ports.ts';
import { Applier } from './apply.ts';
import { binariesAvailable, etcdBin, kubeApiserverBin } from './binaries.ts';
import { makeCerts } from './certs.ts';
import type { ClusterCerts } from './certs.ts';
import { DaemonError, logTail, startDaemon } from './daemon.ts';
import type { Daemon } from './daemon.ts';
import { manifestText, RBAC_MANIFESTS } from './manifests.ts';
import { restRequest } from './rest.ts';
import { writeKubeconfig } from './kubeconfig.ts';

export { binariesAvailable } from './binaries.ts';

export interface TestCluster {
  /** https://127.0.0.1:<port> */
  url: string;
  /** CA that signed the serving certificate. */
  caFile: string;
  /** User e2e-admin in group system:masters. */
  adminToken: string;
  /** The ServiceAccount kube-system/kube-dns's user and groups, bound only by the RBAC_MANIFESTS. */
  kubeDnsToken: string;
  /** Path of a kubeconfig file for that token (server url, or `server` such as a proxy in front of it, + CA). */
  kubeconfig(token: string, server?: string): string;
  /** Create-or-replace as admin via the REST API. */
  apply(yamlOrObjects: string | object[]): Promise<void>;
  /** Raw REST call (as admin unless a token is given); PATCH bodies go as JSON merge patches. */
  request(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  /** Stop and start kube-apiserver again on the same port; etcd keeps the data. */
  restartApiServer(): Promise<void>;
  stopApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
  /** Temp dir with certs, tokens, data and logs. */
  dir: string;
}

const readyTimeoutMs = 90_000;
const serviceCIDRs = '10.0.0.0/24,fd00:10::/108';

class ClusterError extends DaemonError {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it is true (an error counts as not yet); throws with the daemons' log tails when
 * one of them exits first or time runs out.
 */
export async function waitUntil(daemons: Daemon[], what: string, probe: () => Promise<boolean>, ms = readyTimeoutMs): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const dead = daemons.find((d) => !d.running());
    if (dead !== undefined) {
      throw new ClusterError('E2E_ERR_STARTUP', `${dead.name} exited (${await dead.exited}) before ${what}; log ${dead.logFile}:\n${logTail(dead.logFile)}`);
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > until) {
      throw new ClusterError('E2E_ERR_STARTUP', `not ${what} within ${ms} ms:\n${daemons.map((d) => `--- ${d.logFile}\n${logTail(d.logFile, 15)}`).join('\n')}`);
    }
    await sleep(100);
  }
}

/** etcd on free loopback ports, its data under `dir`; wait for it with etcdHealthy. */
export async function startEtcd(dir: string): Promise<{ daemon: Daemon; url: string }> {
  const clientPort = await freePort();
  const peerPort = await freePort();
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const daemon = startDaemon(etcdBin(), [
    '--name=e2e',
    `--data-dir=${join(dir, 'etcd-data')}`,
    `--listen-client-urls=${url}`,
    `--advertise-client-urls=${url}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=e2e=${peer}`,
    '--unsafe-no-fsync', // test data: durability does not matter, speed on a shared disk does
    '--log-level=warn',
  ], join(dir, 'etcd.log'));
  return { daemon, url };
}

export async function etcdHealthy(url: string): Promise<boolean> {
  const res = await fetch(`${url}/health`);
  return res.ok && ((await res.json()) as { health?: string }).health === 'true';
}

/** kube-apiserver's certificates, ServiceAccount keys and static tokens, all under `dir`. */
export function apiserverCredentialArgs(dir: string, certs: ClusterCerts): string[] {
  return [
    `--cert-dir=${join(dir, 'apiserver-certs')}`,
    `--tls-cert-file=${certs.serverCert}`,
    `--tls-private-key-file=${certs.serverKey}`,
    `--service-account-key-file=${certs.saKey}`,
    `--service-account-signing-key-file=${certs.saKey}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
  ];
}

function apiserverArgs(dir: string, port: number, etcdUrl: string, certs: ClusterCerts): string[] {
  return [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    ...apiserverCredentialArgs(dir, certs),
    // Dual-stack Service ranges, so tests can make IPv4, IPv6 and dual-stack ClusterIPs.
    `--service-cluster-ip-range=${serviceCIDRs}`,
    `--service-account-issuer=https://127.0.0.1:${port}`,
    '--authorization-mode=RBAC',
    // No controller-manager creates the default ServiceAccounts this admission plugin insists on.
    '--disable-admission-plugins=ServiceAccount',
    // Only loopback exists for us: publish 127.0.0.1 and do not write the `kubernetes` Endpoints, which
    // refuse loopback addresses (the Service still exists, without endpoints).
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    '--profiling=false',
  ];
}

export async function startCluster(t: Test): Promise<TestCluster> {
  const available = binariesAvailable();
  if (!available.ok) throw new ClusterError('E2E_ERR_NO_BINARIES', available.why!);

  const dir = mkdtempSync(join(tmpdir(), 'kube-dns-ts-e2e-'));
  mkdirSync(join(dir, 'apiserver-certs'));
  const daemons: { etcd?: Daemon; apiserver?: Daemon } = {};
  t.teardown(async () => {
    await daemons.apiserver?.stop();
    await daemons.etcd?.stop();
    if (t.passing()) rmSync(dir, { recursive: true, force: true });
    else t.comment(`e2e cluster files kept for inspection: ${dir}`);
  });

  const certs = makeCerts(dir);
  const ca = readFileSync(certs.caFile, 'utf8');
  const adminToken = randomBytes(24).toString('hex');
  const kubeDnsToken = randomBytes(24).toString('hex');
  // token,user,uid,"groups" (kube-apiserver's static token file format)
  writeFileSync(join(dir, 'tokens.csv'), `${adminToken},e2e-admin,e2e-admin,"system:masters"\n${kubeDnsToken},system:serviceaccount:kube-system:kube-dns,kube-dns-sa,"system:serviceaccounts,system:serviceaccounts:kube-system"\n`, { mode: 0o600 });

  const etcd = await startEtcd(dir);
  daemons.etcd = etcd.daemon;
  await waitUntil([etcd.daemon], 'healthy', () => etcdHealthy(etcd.url));

  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const target = { url, ca };
  const request = (method: string, path: string, body?: unknown, token = adminToken) => restRequest(target, method, path, token, body);
  const args = apiserverArgs(dir, port, etcd.url, certs);

  const startApiServer = async (): Promise<void> => {
    if (daemons.apiserver?.running()) return;
    const apiserver = startDaemon(kubeApiserverBin(), args, join(dir, 'kube-apiserver.log'));
    daemons.apiserver = apiserver;
    await waitUntil([apiserver], 'ready', async () => (await request('GET', '/readyz')).status === 200);
    // The system namespaces are made by a controller that /readyz does not wait for.
    await waitUntil([apiserver], 'serving kube-system', async () => (await request('GET', '/api/v1/namespaces/kube-system')).status === 200);
  };
  const stopApiServer = async (): Promise<void> => {
    await daemons.apiserver?.stop();
  };

  const kubeconfigs = new Map<string, string>();
  const kubeconfig = (token: string, server = url): string => {
    const key = `${token} ${server}`;
    let path = kubeconfigs.get(key);
    if (path) return path;
    path = writeKubeconfig(join(dir, `kubeconfig-${kubeconfigs.size + 1}.yaml`), server, certs.caFile, token, 'e2e');
    kubeconfigs.set(key, path);
    return path;
  };

  const applier = new Applier((method, path, body) => request(method, path, body));
  await startApiServer();
  for (const file of RBAC_MANIFESTS) await applier.apply(manifestText(file));

  return {
    url,
    caFile: certs.caFile,
    adminToken,
    kubeDnsToken,
    kubeconfig,
    apply: (objs) => applier.apply(objs),
    request,
    async restartApiServer() {
      await stopApiServer();
      await startApiServer();
    },
    stopApiServer,
    startApiServer,
    dir,
  };
}
