// The shipped kube-dns pod run from the built images with podman, each container as the kubelet runs the
// Deployment template of manifests/kube-dns.yaml: the manifest's image, args, env, memory limit and
// securityContext (user 65532, read-only root without podman's extra tmpfs mounts, no privilege
// escalation, capabilities dropped and added as listed), its volumes (the kube-dns ConfigMap as a
// read-only directory, the emptyDir as a tmpfs), all in one network namespace the test made, as a
// pod's containers share one. The one change: kube-dns reads a cluster file instead of the API (the
// cluster tier runs it against a real one). Containers are removed by id at teardown.

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { only, readManifest, README_VALUES } from '../../e2e/harness/manifests.ts';
import type { KubeObject } from '../../e2e/harness/manifests.ts';
import { repoRoot } from '../../helpers/process.ts';
import { cacheRoot } from '../../e2e/harness/binaries.ts';

const run = promisify(execFile);

/** podman's configuration for this machine (test/cluster/images/containers.conf: rlimits root may set). */
export const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: join(repoRoot, 'test/cluster/images/containers.conf') };
/** What test/cluster/images/build.sh built: tag → Dockerfile, target, bytes, seconds. */
export const IMAGES_REPORT = process.env.IMAGES_REPORT ?? join(cacheRoot(), 'images/report.json');

export interface BuiltImage {
  dockerfile: string;
  target: string;
  bytes: number;
  seconds: number;
}

export function builtImages(): Record<string, BuiltImage> | null {
  return existsSync(IMAGES_REPORT) ? (JSON.parse(readFileSync(IMAGES_REPORT, 'utf8')) as Record<string, BuiltImage>) : null;
}

export function podman(args: string[]): string {
  return execFileSync('podman', args, { env: PODMAN_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Whether the image tests can run: the images built (npm test's pretest builds them). In CI a missing
 * build fails `t`; elsewhere a machine without root or podman skips it, loudly.
 */
export function imagesCanRun(t: Test): boolean {
  if (builtImages() !== null) return true;
  const why = `the images are not built (${IMAGES_REPORT} missing; npm test's pretest runs test/cluster/images/build.sh)`;
  if (process.env.CI === 'true') {
    t.fail(why);
    return false;
  }
  console.error(`\n*** SKIPPING image tests: ${why} ***\n`);
  t.skip(why, () => {});
  return false;
}

export interface RunningContainer {
  id: string;
  /** The container's main process, as the host sees it. */
  pid: number;
}

export interface ImagePod {
  containers: Map<string, RunningContainer>;
  /** What a container wrote to stdout and stderr so far. */
  logs(name: string): Promise<string>;
}

export interface ImagePodOptions {
  /** The network namespace the pod's containers share (`ip netns add`). */
  netns: string;
  /** Host directory standing in for the kube-dns ConfigMap volume (readable by uid 65532). */
  configDir: string;
  /** Host directory holding cluster.yaml, which kube-dns serves (readable by uid 65532). */
  clusterDir: string;
}

/** The kube-dns Deployment's pod template, placeholders replaced as manifests/README.md does. */
export function podTemplate(): KubeObject {
  return only(readManifest('kube-dns.yaml', README_VALUES), 'Deployment', 'kube-dns').spec.template;
}

/** `podman run` arguments for one container of the template, as the kubelet would run it. */
export function containerArgs(pod: KubeObject, c: KubeObject, o: ImagePodOptions, name: string): string[] {
  const podSc = pod.spec.securityContext ?? {};
  const sc = c.securityContext ?? {};
  const args = ['run', '-d', '--pull=never', `--name=${name}`, `--network=ns:/run/netns/${o.netns}`, '--dns=192.0.2.53'];
  const user = sc.runAsUser ?? podSc.runAsUser;
  if (user !== undefined) args.push(`--user=${user}:${sc.runAsGroup ?? podSc.runAsGroup ?? user}`);
  // The kubelet mounts nothing writable that the pod does not name: no tmpfs on /tmp, /run, /var/tmp.
  if (sc.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt=no-new-privileges');
  for (const cap of sc.capabilities?.drop ?? []) args.push(`--cap-drop=${cap}`);
  for (const cap of sc.capabilities?.add ?? []) args.push(`--cap-add=${cap}`);
  const memory = c.resources?.limits?.memory;
  if (memory !== undefined) args.push(`--memory=${String(memory).replace(/i$/, '').toLowerCase()}`);
  for (const e of c.env ?? []) args.push('-e', `${e.name}=${e.value}`);
  for (const m of c.volumeMounts ?? []) {
    const volume = pod.spec.volumes.find((v: KubeObject) => v.name === m.name);
    if (volume.configMap) args.push('-v', `${o.configDir}:${m.mountPath}:ro`);
    else if (volume.emptyDir) args.push('--tmpfs', `${m.mountPath}:rw,mode=1777,size=${String(volume.emptyDir.sizeLimit ?? '64Mi').replace(/i$/, '').toLowerCase()}`);
    else throw new Error(`volume ${m.name}: only configMap and emptyDir volumes are run here`);
  }
  const extra = c.name === 'kubedns' ? ['--cluster-file=/cluster/cluster.yaml'] : [];
  if (extra.length > 0) args.push('-v', `${o.clusterDir}:/cluster:ro`);
  return [...args, c.image, ...(c.args ?? []), ...extra];
}

/** The pod's three containers, started in the template's order; resolves once each runs. */
export async function runImagePod(t: Test, o: ImagePodOptions): Promise<ImagePod> {
  const pod = podTemplate();
  const containers = new Map<string, RunningContainer>();
  const id = `kdt-${process.pid}-${Date.now().toString(36)}`;
  t.teardown(() => {
    for (const c of containers.values()) {
      try {
        podman(['rm', '-f', '-t', '2', c.id]);
      } catch {
        // already gone
      }
    }
  });
  for (const c of pod.spec.containers) {
    const cid = podman(containerArgs(pod, c, o, `${id}-${c.name}`)).trim();
    containers.set(c.name, { id: cid, pid: Number(podman(['inspect', '--format', '{{.State.Pid}}', cid]).trim()) });
  }
  return {
    containers,
    logs: async (name) => {
      const { stdout, stderr } = await run('podman', ['logs', containers.get(name)!.id], { env: PODMAN_ENV });
      return stdout + stderr;
    },
  };
}
