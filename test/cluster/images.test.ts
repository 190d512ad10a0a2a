// The images built from the unchanged Dockerfile (test/cluster/images/build.sh, npm test's pretest),
// one target a program on the same layers, and run as manifests/kube-dns.yaml runs them: the pod's
// three containers in one network namespace, as uid 65532 with read-only roots, no privilege
// escalation and every capability dropped but NET_BIND_SERVICE (the images' one node carries it as a
// file capability, for dnscache's port 53 and CoreDNS's given -conf); asked from a pod-like client
// namespace with the kubelet's resolv.conf, by dig and by glibc's and musl's getaddrinfo.

import t from 'tap';
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { builtImages, imagesCanRun, podman, podTemplate, runImagePod } from './harness/image-pod.ts';
import type { ImagePod } from './harness/image-pod.ts';
import { answers, parseDig } from '../helpers/dig.ts';
import { dnsmasqReadableDir } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { yamlDocs } from '../helpers/kubedns.ts';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import type { ClientPod } from '../helpers/netns.ts';
import { repoRoot } from '../helpers/process.ts';
import { buildResolvers } from '../helpers/resolvers.ts';
import { EXEC_TOKEN, execUserProbe, probeResult } from '../helpers/client-node-probe.ts';

const run = promisify(execFile);
const VERSION = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;
const TAGS = ['kube-dns', 'dnsmasq-nanny', 'sidecar'].map((name) => `kube-dns-ts/${name}:${VERSION}`);
/** optional/node-local-dns.yaml's: root (the Dockerfile says why). */
const NODE_CACHE = `kube-dns-ts/node-cache:${VERSION}`;
/** No manifest runs it; built for those who run the pod's cache without the nanny. */
const DNSCACHE = `kube-dns-ts/dnscache:${VERSION}`;

/** A directory uid 65532 can read (as dnsmasq's dropped user can), removed after the test. */
function readableDir(t: Test, prefix: string): string {
  const dir = dnsmasqReadableDir(prefix);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Lines of /proc/<pid>/status by key (Uid, CapEff, NoNewPrivs, ...). */
function procStatus(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return out;
}

/** The direct children of a process. */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

async function digFrom(client: ClientPod, name: string, type = 'A', extra: string[] = []) {
  const question = name === '' ? [] : [name, type];
  const { stdout } = await run('ip', ['netns', 'exec', client.netns, 'dig', `@${client.nameserver}`, ...question, '+tries=1', '+time=3', ...extra], { timeout: 15_000 });
  return parseDig(stdout);
}

async function httpFrom(client: ClientPod, port: number, path: string): Promise<{ status: number; body: string }> {
  const { stdout } = await run('ip', ['netns', 'exec', client.netns, 'curl', '-s', '-m', '3', '-w', '\n%{http_code}', `http://${client.nameserver}:${port}${path}`], { timeout: 15_000 });
  const at = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
}

t.test('the images, built from the Dockerfile as it is: the same layers, each its own entrypoint', async (t) => {
  if (!imagesCanRun(t)) return;
  const built = builtImages()!;
  const all = [...TAGS, NODE_CACHE, DNSCACHE];
  t.same(Object.keys(built).sort(), [...all].sort(), 'one image per target');
  const images = new Map(all.map((tag) => [tag, JSON.parse(podman(['image', 'inspect', tag]))[0]]));
  const first = images.get(all[0]);
  for (const tag of all.slice(1)) t.same(images.get(tag).RootFS.Layers, first.RootFS.Layers, `${tag}: every layer is ${all[0]}'s`);
  const entrypoints = new Set(all.map((tag) => images.get(tag).Config.Entrypoint.at(-1)));
  t.equal(entrypoints.size, all.length, `each runs its own program: ${[...entrypoints].join(', ')}`);
  for (const tag of all) {
    const config = images.get(tag).Config;
    t.equal(config.User, tag === NODE_CACHE ? '0:0' : '65532:65532', `${tag}: runs as ${tag === NODE_CACHE ? 'root' : '65532'} without being told`);
    t.equal(config.Entrypoint[0], '/nodejs/bin/node', `${tag}: the runtime image's node`);
  }
  const template = podTemplate();
  t.same(template.spec.containers.map((c: { image: string }) => c.image).sort(), [...TAGS].sort(), 'the manifest names exactly these images');
});

t.test("kube-dns's image: the bundled client-node runs a kubeconfig's exec user", async (t) => {
  if (!imagesCanRun(t)) return;
  const out = podman(['run', '--rm', '--network=none', '--workdir=/app', '--entrypoint', '/nodejs/bin/node', `kube-dns-ts/kube-dns:${VERSION}`, '--input-type=module', '-e', execUserProbe()]);
  t.equal(probeResult(out).authorization, `Bearer ${EXEC_TOKEN}`, "the exec plugin's token on the request");
});

t.test("the manifest's pod, run from the images, answers a pod through dnscache on :53", async (t) => {
  if (!imagesCanRun(t) || !netnsCanRun(t)) return;
  const net = podNetwork(t, ['default']);
  const [client] = net.clients;
  const clusterDir = readableDir(t, 'kdt-image-cluster-');
  const clientPod = `apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default, uid: uid-client}\nspec: {}\nstatus: {phase: Running, podIP: ${client.ip}}`;
  writeFileSync(join(clusterDir, 'cluster.yaml'), yamlDocs(readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8'), clientPod));
  chmodSync(join(clusterDir, 'cluster.yaml'), 0o644);
  const pod: ImagePod = await runImagePod(t, { netns: net.dns, configDir: readableDir(t, 'kdt-image-config-'), clusterDir });
  const ready = await eventually(async () => (await httpFrom(client, 8081, '/readiness').catch(() => null))?.status === 200, 'kube-dns ready', 60_000).catch(async (err) => {
    for (const name of pod.containers.keys()) t.comment(`${name}:\n${await pod.logs(name)}`);
    throw err;
  });
  t.ok(ready, "kube-dns's /readiness: 200");

  const udp = await eventually(async () => {
    const r = await digFrom(client, 'kubernetes.default.svc.cluster.local').catch(() => null);
    return r?.status === 'NOERROR' && r;
  }, 'dnscache answering on :53', 30_000);
  t.same(answers(udp, 'A'), ['10.96.0.1'], 'UDP through dnscache and kube-dns');
  const tcp = await digFrom(client, 'kubernetes.default.svc.cluster.local', 'A', ['+tcp']);
  t.same(answers(tcp, 'A'), ['10.96.0.1'], 'TCP too');
  t.equal((await digFrom(client, 'nosuch.default.svc.cluster.local')).status, 'NXDOMAIN');
  const ptr = await digFrom(client, '', 'A', ['-x', '10.96.0.1']);
  t.same(answers(ptr), ['kubernetes.default.svc.cluster.local.'], 'PTR');

  const resolvers = buildResolvers(t);
  for (const kind of ['glibc', 'musl'] as const) {
    const bin = resolvers.get(kind);
    if (bin === undefined) continue;
    const { stdout } = await run('ip', ['netns', 'exec', client.netns, bin, 'kubernetes.default', 'kubernetes'], { timeout: 30_000 });
    t.match(stdout, /^kubernetes\.default 10\.96\.0\.1$/m, `${kind} getaddrinfo, the search list`);
    t.match(stdout, /^kubernetes 10\.96\.0\.1$/m, `${kind}: a name of the pod's own namespace`);
  }

  for (const path of ['/healthcheck/kubedns', '/healthcheck/dnsmasq']) {
    await eventually(async () => (await httpFrom(client, 10054, path)).status === 200, `sidecar ${path}: 200`, 30_000);
    t.pass(`sidecar ${path}: 200`);
  }
  const sidecar = await httpFrom(client, 10054, '/metrics');
  t.match(sidecar.body, /^kubedns_dnsmasq_hits \d+/m, "the sidecar reads dnscache's statistics");
  t.match((await httpFrom(client, 10055, '/metrics')).body, /^skydns_skydns_dns_request_count_total\{system="auth"\} \d+/m, "kube-dns's PROMETHEUS_PORT");
  t.match((await httpFrom(client, 10056, '/metrics')).body, /^dnsmasq_nanny_child_up 1$/m, 'the nanny runs dnscache');

  for (const [name, c] of pod.containers) {
    const s = procStatus(c.pid);
    t.equal(s.Uid.split(/\s+/)[0], '65532', `${name}: uid 65532`);
    t.equal(s.NoNewPrivs, '1', `${name}: no privilege escalation`);
    t.equal(BigInt(`0x${s.CapBnd}`), 1n << 10n, `${name}: capability bounding set as the manifest lists: NET_BIND_SERVICE alone`);
  }
  const nanny = pod.containers.get('dnsmasq')!.pid;
  const [dnscache] = childrenOf(nanny);
  t.ok(dnscache, "the nanny's child");
  t.match(readFileSync(`/proc/${dnscache}/cmdline`, 'utf8'), /dnscache/, 'is dnscache');
  t.equal(BigInt(`0x${procStatus(dnscache).CapEff}`), 1n << 10n, 'dnscache holds NET_BIND_SERVICE alone (the file capability of the image node)');
});
