// A real single-node Kubernetes cluster on this machine, from the cached binaries (build-binaries.sh
// --cluster) and the images built from our Dockerfiles: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd + runc, the CNI bridge, the kubelet and kube-proxy (iptables or nftables).
// The node's address lives on a bridge without ports; pods live on a CNI bridge whose traffic never
// leaves the machine (no masquerade, a FORWARD drop towards the uplink); the node's resolv.conf names a
// dnsmasq on the node's address that answers NXDOMAIN but for a few fixed names (outside.example,
// BENCH_NAMES), and a second one beside it serves a stub domain (db.corp.example). Everything the cluster
// changes on the machine (links, routes, rules, sysctls, mounts, network namespaces, cgroups) is undone
// at teardown, by pid for every process, even when a check fails. One cluster at a time on a machine:
// startNodeCluster waits for a lock.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { freePort } from '../../helpers/ports.ts';
import { repoRoot } from '../../helpers/process.ts';
import { DNSMASQ, dnsmasqHostsArgs } from '../../helpers/dnsmasq.ts';
import { Applier } from '../../e2e/harness/apply.ts';
import { binariesAvailable, CLUSTER_BINARIES, k8sBin } from '../../e2e/harness/binaries.ts';
import { makeCerts } from '../../e2e/harness/certs.ts';
import { startDaemon } from '../../e2e/harness/daemon.ts';
import type { Daemon } from '../../e2e/harness/daemon.ts';
import { apiserverCredentialArgs, etcdHealthy, startEtcd, waitUntil } from '../../e2e/harness/cluster.ts';
import { writeKubeconfig } from '../../e2e/harness/kubeconfig.ts';
import { restRequest } from '../../e2e/harness/rest.ts';
import { HostChanges, inCgroup, killMatching, makeCgroups, removeCgroups, removeCommented, removeKubeChains, removeNodeCacheLeftovers, sh, shQuiet, unmountUnder } from './host.ts';
import { builtImages, podman } from './image-pod.ts';
import { NET, nodeDirs, PAUSE_IMAGE, writeCniConfig, writeContainerdConfig, writeKubeletConfig, writeKubeProxyConfig } from './node-config.ts';
import type { NodeDirs, ProxyMode } from './node-config.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface NodeCluster {
  /** Its files: configs, logs, data (kept after a failing test). */
  dir: string;
  /** A kubeconfig with the admin token (system:masters). */
  kubeconfig: string;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  apply(yamlOrObjects: string | object[]): Promise<void>;
  /** `kubectl <args>` against the cluster; resolves with stdout, rejects with stderr. */
  kubectl(args: string[], timeoutMs?: number): Promise<string>;
}

/** Names the world's DNS answers with 192.0.2.20, each for a test to ask once (a miss at every cache). */
export const BENCH_NAMES = ['glibc', 'musl'].flatMap((libc) => Array.from({ length: 10 }, (_, i) => `${libc}${i}.bench.test`));

export interface NodeClusterOptions {
  proxyMode?: ProxyMode;
  /** More images from podman's storage for the node (bench/rollout.ts: CoreDNS's). */
  images?: string[];
}

/** Tools a cluster needs on the machine, beyond the cached binaries and the images. */
const TOOLS = ['containerd', 'runc', 'ctr', 'jq', 'iptables', 'conntrack', 'nft', 'podman', DNSMASQ];

/** Why a cluster cannot start here, or null. */
export function clusterMissing(): string | null {
  if (process.getuid?.() !== 0) return 'the cluster tier needs root';
  const bins = binariesAvailable(CLUSTER_BINARIES);
  if (!bins.ok) return bins.why!;
  if (builtImages() === null) return 'the images are not built (test/cluster/images/build.sh)';
  const missing = TOOLS.filter((tool) => {
    try {
      sh('sh', ['-c', `command -v ${tool}`]);
      return false;
    } catch {
      return true;
    }
  });
  return missing.length > 0 ? `missing tools: ${missing.join(', ')} (.ci/run installs them)` : null;
}

/** Whether a cluster test can run: in CI anything missing fails `t`; elsewhere it skips, loudly. */
export function clusterCanRun(t: Test): boolean {
  const why = clusterMissing();
  if (why === null) return true;
  if (process.env.CI === 'true') t.fail(why);
  else {
    console.error(`\n*** SKIPPING cluster tests: ${why} ***\n`);
    t.skip(why, () => {});
  }
  return false;
}

const LOCK = join(tmpdir(), 'kube-dns-ts-cluster.lock');

/** One cluster at a time on a machine (tap runs test files side by side): a lock dir holding our pid. */
async function lock(t: Test): Promise<void> {
  for (let waited = 0; ; waited += 500) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      t.teardown(() => rmSync(LOCK, { recursive: true, force: true }));
      return;
    } catch {
      const holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8').trim() || 0);
      let alive = holder > 0;
      try {
        if (alive) process.kill(holder, 0);
      } catch {
        alive = false;
      }
      if (!alive) rmSync(LOCK, { recursive: true, force: true });
      else if (waited > 20 * 60_000) throw new Error(`waited 20 minutes for the cluster lock held by pid ${holder}`);
      await sleep(500);
    }
  }
}

/** The uplink: the interface of the default route, which pods must never reach past. */
function uplink(): string | null {
  const m = /dev (\S+)/.exec(sh('ip', ['-o', 'route', 'show', 'default']));
  return m ? m[1] : null;
}

/** The node's network: its address on a port-less bridge, the Service range routed into it, no way out for pods. */
function setUpNetwork(host: HostChanges): void {
  host.ip(['link', 'add', NET.nodeBridge, 'type', 'bridge'], ['link', 'del', NET.nodeBridge]);
  for (const address of [NET.nodeIp, NET.stubIp]) host.ip(['addr', 'add', `${address}/32`, 'dev', NET.nodeBridge], ['addr', 'del', `${address}/32`, 'dev', NET.nodeBridge]);
  host.ip(['link', 'set', NET.nodeBridge, 'up'], ['link', 'set', NET.nodeBridge, 'down']);
  // A ClusterIP packet that no rule rewrites stays on this machine instead of taking the default route.
  host.ip(['route', 'add', NET.serviceCidr, 'dev', NET.nodeBridge], ['route', 'del', NET.serviceCidr, 'dev', NET.nodeBridge]);
  const out = uplink();
  if (out !== null) host.iptablesInsert('FORWARD', ['-s', NET.clusterCidr, '-o', out, '-j', 'DROP', '-m', 'comment', '--comment', FORWARD_COMMENT]);
  // What the kubelet and kube-proxy rewrite at start, and what pods on a bridge need.
  for (const name of ['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops', 'net.ipv4.conf.all.route_localnet', 'net.ipv4.vs.conntrack', 'net.netfilter.nf_conntrack_max']) {
    if (existsSync(`/proc/sys/${name.replaceAll('.', '/')}`)) host.sysctl(name);
  }
  host.sysctl('net.ipv4.ip_forward', '1');
  host.sysctl('net.bridge.bridge-nf-call-iptables', '1');
}

/**
 * A resolver on the node's bridge answering NXDOMAIN for every name but `hosts`:
 * the node's own (the world's DNS for the cluster) and a stub domain's server.
 */
function startResolver(dir: string, name: string, address: string, hosts: string): Daemon {
  const own = join(dir, name);
  mkdirSync(own, { recursive: true });
  chmodSync(own, 0o755);
  writeFileSync(join(own, 'hosts'), hosts, { mode: 0o644 });
  return startDaemon(DNSMASQ, dnsmasqHostsArgs(53, join(own, 'hosts'), join(own, 'pid'), ['--local=/#/'], address), join(dir, `${name}.log`));
}

/** The images the manifests name, the pause stand-in and the test pods' images, into containerd. */
async function importImages(d: NodeDirs, images: string[]): Promise<void> {
  const archive = join(d.root, 'images.tar');
  // containerd reads a short name as docker.io/<name>: the same name a manifest's image resolves to.
  const named = images.map((image) => (image.split('/')[0].includes('.') ? image : `docker.io/${image}`));
  images.forEach((image, i) => podman(['tag', image, named[i]]));
  podman(['save', '--multi-image-archive', '-o', archive, ...named]);
  await run('ctr', ['--address', d.containerdSocket, '-n', 'k8s.io', 'images', 'import', archive], { maxBuffer: 16 << 20 });
  rmSync(archive);
}

export async function startNodeCluster(t: Test, o: NodeClusterOptions = {}): Promise<NodeCluster> {
  const proxyMode = o.proxyMode ?? 'iptables';
  await lock(t);
  const swept = sweepLeftovers();
  if (swept.length > 0) t.comment(`swept what a killed cluster run left: ${swept.join('; ')}`);
  const dir = mkdtempSync(join(tmpdir(), CLUSTER_DIR_PREFIX));
  chmodSync(dir, 0o755);
  const d = nodeDirs(dir);
  const host = new HostChanges(join(dir, SYSCTLS_BEFORE));
  const daemons: Record<string, Daemon> = {};
  const netnsBefore = new Set(netnsList());
  t.teardown(async () => {
    const problems = await tearDown(d, daemons, host, netnsBefore);
    if (problems.length > 0) t.comment(`cluster teardown could not undo:\n${problems.join('\n')}`);
    if (t.passing()) rmSync(dir, { recursive: true, force: true });
    else t.comment(`cluster files kept for inspection: ${dir}`);
  });

  setUpNetwork(host);
  writeFileSync(d.resolvConf, `nameserver ${NET.nodeIp}\n`);
  // outside.example and the BENCH_NAMES exist in the world (from a hosts file, so AAAA is NODATA: a
  // wildcard --address beside --local=/#/ answers AAAA NXDOMAIN, and musl then takes the name for
  // missing); db.corp.example only at the stub server.
  daemons.nodeDns = startResolver(dir, 'node-dns', NET.nodeIp, `192.0.2.10 outside.example\n192.0.2.20 ${BENCH_NAMES.join(' ')}\n`);
  daemons.stubDns = startResolver(dir, 'stub-dns', NET.stubIp, '192.0.2.30 db.corp.example\n');

  const certs = makeCerts(dir, [`IP:${NET.nodeIp}`, `IP:${NET.kubernetesServiceIp}`, 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', `DNS:kubernetes.default.svc.${NET.domain}`]);
  const token = randomBytes(24).toString('hex');
  writeFileSync(join(dir, 'tokens.csv'), `${token},kdt-admin,kdt-admin,"system:masters"\n`, { mode: 0o600 });

  const etcd = await startEtcd(dir);
  daemons.etcd = etcd.daemon;
  await waitUntil([etcd.daemon], 'etcd healthy', () => etcdHealthy(etcd.url));

  const port = await freePort();
  const url = `https://${NET.nodeIp}:${port}`;
  mkdirSync(join(dir, 'apiserver-certs'));
  daemons.apiserver = startDaemon(k8sBin('kube-apiserver'), [
    `--etcd-servers=${etcd.url}`,
    `--bind-address=${NET.nodeIp}`,
    `--advertise-address=${NET.nodeIp}`,
    `--secure-port=${port}`,
    ...apiserverCredentialArgs(dir, certs),
    `--service-cluster-ip-range=${NET.serviceCidr}`,
    `--service-account-issuer=https://kubernetes.default.svc.${NET.domain}`,
    '--authorization-mode=Node,RBAC',
    '--allow-privileged=true',
    '--kubelet-preferred-address-types=InternalIP',
    '--profiling=false',
  ], join(dir, 'kube-apiserver.log'));
  const ca = readFileSync(certs.caFile, 'utf8');
  const request = (method: string, path: string, body?: unknown) => restRequest({ url, ca }, method, path, token, body);
  await waitUntil([daemons.etcd, daemons.apiserver], 'the API server ready', async () => (await request('GET', '/readyz')).status === 200);

  const kubeconfig = writeKubeconfig(join(dir, 'admin.kubeconfig'), url, certs.caFile, token, 'kdt');
  // As kubeadm with a pod network: the node's spec.podCIDR is given from the cluster range; the first
  // /24 of it is the range the CNI config hands out (NET.podCidr).
  const nodeRangeArgs = ['--allocate-node-cidrs=true', `--cluster-cidr=${NET.clusterCidr}`, '--node-cidr-mask-size=24'];
  daemons.controllerManager = startDaemon(k8sBin('kube-controller-manager'), [`--kubeconfig=${kubeconfig}`, `--service-account-private-key-file=${certs.saKey}`, `--root-ca-file=${certs.caFile}`, '--use-service-account-credentials=false', '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${await freePort()}`, `--cert-dir=${join(dir, 'kcm-certs')}`, ...nodeRangeArgs], join(dir, 'kube-controller-manager.log'));
  daemons.scheduler = startDaemon(k8sBin('kube-scheduler'), [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${await freePort()}`, `--cert-dir=${join(dir, 'scheduler-certs')}`], join(dir, 'kube-scheduler.log'));

  writeCniConfig(d);
  daemons.containerd = startDaemon('/usr/bin/containerd', ['--config', writeContainerdConfig(d)], join(dir, 'containerd.log'));
  await waitUntil([daemons.containerd], 'containerd serving', async () => (await run('ctr', ['--address', d.containerdSocket, 'version'])).stdout.includes('Server'), 30_000);
  const images = [...Object.keys(builtImages()!), PAUSE_IMAGE, ...TEST_IMAGES, ...(o.images ?? [])];
  await importImages(d, images);

  makeCgroups(CGROUP_ROOT);
  daemons.kubelet = startDaemon(k8sBin('kubelet'), [`--config=${writeKubeletConfig(d, { port: await freePort(), healthzPort: await freePort() })}`, `--kubeconfig=${kubeconfig}`, `--node-ip=${NET.nodeIp}`, `--hostname-override=${NET.nodeName}`, `--root-dir=${d.kubeletRoot}`, `--cert-dir=${join(d.kubeletRoot, 'pki')}`], join(dir, 'kubelet.log'));
  daemons.kubeProxy = startDaemon(k8sBin('kube-proxy'), [`--config=${writeKubeProxyConfig(d, proxyMode, kubeconfig, { healthzPort: await freePort(), metricsPort: await freePort() })}`], join(dir, 'kube-proxy.log'));
  await waitUntil(Object.values(daemons), 'the node Ready', async () => {
    const node = await request('GET', `/api/v1/nodes/${NET.nodeName}`);
    return node.status === 200 && node.body.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
  }, 120_000);

  const applier = new Applier((method, path, body) => request(method, path, body));
  const kubectl = async (args: string[], timeoutMs = 60_000) => (await run(k8sBin('kubectl'), [`--kubeconfig=${kubeconfig}`, ...args], { timeout: timeoutMs, maxBuffer: 16 << 20 })).stdout;
  return { dir, kubeconfig, request, apply: (objs) => applier.apply(objs), kubectl };
}

const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
/** The test pods' client: dig, curl, lookup-glibc, lookup-musl (test/cluster/images/build.sh builds it). */
export const CLIENT_IMAGE = `kube-dns-ts/test-client:${VERSION}`;
/** What Kubernetes' DNS e2e specs run, built locally under these names (test/cluster/images/build.sh). */
export const E2E_IMAGES = ['registry.k8s.io/e2e-test-images/agnhost:2.63.0', 'registry.k8s.io/e2e-test-images/glibc-dns-testing:2.0.0'];
const TEST_IMAGES = [CLIENT_IMAGE, ...E2E_IMAGES];

function netnsList(): string[] {
  return existsSync('/run/netns') ? readdirSync('/run/netns') : [];
}

/** Everything the cluster started or changed, undone; returns what could not be. */
async function tearDown(d: NodeDirs, daemons: Record<string, Daemon>, host: HostChanges, netnsBefore: Set<string>): Promise<string[]> {
  const problems: string[] = [];
  const attempt = async (what: string, fn: () => unknown) => {
    try {
      await fn();
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message.split('\n')[0]}`);
    }
  };
  for (const name of ['kubeProxy', 'kubelet', 'scheduler', 'controllerManager']) await attempt(`stop ${name}`, () => daemons[name]?.stop(5000));
  // The pods' containers: killed through containerd, then containerd and any shim it left.
  if (daemons.containerd?.running()) {
    const ctr = (...args: string[]) => sh('ctr', ['--address', d.containerdSocket, '-n', 'k8s.io', ...args]);
    await attempt('kill tasks', () => {
      for (const id of ctr('tasks', 'ls', '-q').split('\n').filter(Boolean)) shQuiet('ctr', ['--address', d.containerdSocket, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id]);
    });
    await sleep(500);
  }
  await attempt('stop containerd', () => daemons.containerd?.stop(5000));
  await attempt('kill shims and containers', () => killContainers(d.root));
  await attempt('rules', () => removeProxyRules());
  await attempt("node-cache's interface and rules", () => removeNodeCacheLeftovers());
  await attempt('network namespaces', () => {
    for (const ns of netnsList()) if (ns.startsWith('cni-') && !netnsBefore.has(ns)) shQuiet('ip', ['netns', 'del', ns]);
  });
  await attempt('mounts', () => unmountUnder(d.root));
  await attempt('pod bridge', () => shQuiet('ip', ['link', 'del', NET.podBridge]));
  await attempt('cgroups', () => removeCgroups(CGROUP_ROOT));
  for (const name of ['apiserver', 'etcd', 'nodeDns', 'stubDns']) await attempt(`stop ${name}`, () => daemons[name]?.stop(5000));
  problems.push(...host.revert());
  return problems;
}

/** containerd's shims for our socket outlive containerd, and the containers outlive a killed shim. */
function killContainers(root: string): void {
  killMatching((cmdline) => cmdline.includes('containerd-shim') && cmdline.includes(root));
  killMatching((_cmdline, pid) => inCgroup(pid, CGROUP_ROOT));
}

/** kube-proxy's rules in both modes, and any KUBE-* chain left after. */
function removeProxyRules(): void {
  shQuiet(k8sBin('kube-proxy'), ['--cleanup']);
  shQuiet(k8sBin('kube-proxy'), ['--cleanup', '--proxy-mode=nftables']);
  removeKubeChains();
}

/** The kubelet's cgroupRoot (node-config.ts): made by the harness in every hierarchy, removed after. */
const CGROUP_ROOT = 'kube-dns-ts';
const CLUSTER_DIR_PREFIX = 'kdt-cluster-';
const SYSCTLS_BEFORE = 'sysctls-before.json';
const FORWARD_COMMENT = 'kube-dns-ts cluster tier: pods stay on this machine';

/**
 * What a cluster left when its test process was killed before its teardown (a runner's timeout): its
 * processes (found by their cluster directory on the command line, and the containers by their cgroup),
 * rules, network namespaces, mounts, links, cgroups and sysctls (their values before, from the file the
 * run wrote), and the directories. Called under the lock, so no live cluster is touched. Returns what
 * it found.
 */
export function sweepLeftovers(): string[] {
  const dirs = readdirSync(tmpdir()).filter((name) => name.startsWith(CLUSTER_DIR_PREFIX)).map((name) => join(tmpdir(), name));
  const found: string[] = [];
  const killed = killMatching((cmdline) => dirs.some((dir) => cmdline.includes(dir))) + killMatching((_cmdline, pid) => inCgroup(pid, CGROUP_ROOT));
  if (killed > 0) found.push(`${killed} processes`);
  if (removeNodeCacheLeftovers()) found.push("node-cache's interface and rules");
  const links = sh('ip', ['-o', 'link']);
  if (killed === 0 && !links.includes(`${NET.nodeBridge}:`) && dirs.length === 0) return found;
  removeProxyRules();
  removeCommented('FORWARD', FORWARD_COMMENT);
  for (const ns of netnsList()) if (ns.startsWith('cni-')) shQuiet('ip', ['netns', 'del', ns]);
  for (const dir of dirs) unmountUnder(dir);
  for (const link of [NET.podBridge, NET.nodeBridge]) if (links.includes(`${link}:`)) {
    shQuiet('ip', ['link', 'del', link]);
    found.push(link);
  }
  removeCgroups(CGROUP_ROOT);
  for (const dir of dirs) {
    const record = join(dir, SYSCTLS_BEFORE);
    if (existsSync(record)) {
      for (const [name, value] of Object.entries(JSON.parse(readFileSync(record, 'utf8')) as Record<string, string>)) {
        writeFileSync(`/proc/sys/${name.replaceAll('.', '/')}`, value);
      }
      found.push(`sysctls of ${dir}`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  if (dirs.length > 0) found.push(`${dirs.length} cluster directories`);
  return found;
}
