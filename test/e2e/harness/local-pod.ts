// Runs the containers of a manifest's pod template as local processes of our programs, with the
// manifest's own args and env, moved onto loopback: every declared containerPort becomes a free local
// port (rewritten wherever the args or a ConfigMap's files name it: `=10053`, `:53,`, `#10053`), every volume a temp dir (its
// mountPath rewritten in the args; /tmp becomes TMPDIR), and the program defaults the manifest relies on
// (kube-dns --healthz-port, the nanny's -metricsAddress and -kubednsServer, dnscache's --port, the
// sidecar's --prometheus-port) are passed explicitly with their moved ports. Only the API credentials
// (a kubeconfig instead of the in-cluster ServiceAccount) and the upstream resolver (none) differ.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { freePort } from '../../helpers/ports.ts';
import { startProgram } from '../../helpers/process.ts';
import type { Program } from '../../helpers/process.ts';
import { kubeDnsFlags } from '../../../cmd/kube-dns/flags.ts';
import { nannyFlags } from '../../../cmd/dnsmasq-nanny/flags.ts';
import { sidecarFlags } from '../../../cmd/sidecar/flags.ts';
import { defaultConfig } from '../../../pkg/dnscache/args.ts';
import { NO_LAME_DUCK } from '../../../pkg/localpod/plan.ts';

export interface LocalPodOptions {
  /** kubeconfig kube-dns authenticates with. */
  kubeconfig: string;
  /** Files of each configMap volume, by ConfigMap name (absent: an empty directory). */
  configMaps?: Record<string, Record<string, string>>;
  /** More args for a program, by program name (a flag the manifest leaves off, e.g. kube-dns --service-entries). */
  extraArgs?: Record<string, string[]>;
}

export interface LocalPod {
  /** The local port standing in for a manifest containerPort. */
  port(manifestPort: number): number;
  /** The running program of each container, by container name. */
  programs: Map<string, Program>;
  /** The HTTP status of one of a container's probes (httpGet), asked on its local port. */
  probe(container: string, kind: 'livenessProbe' | 'readinessProbe'): Promise<number>;
}

/** Our image `kube-dns-ts/<bin>:<tag>` runs the program cmd/<bin>. */
function programOf(image: string): string {
  const m = /^kube-dns-ts\/([a-z-]+):/.exec(image);
  if (!m) throw new Error(`not one of our images: ${image}`);
  return m[1];
}

const portOfAddress = (hostPort: string) => Number(hostPort.slice(hostPort.lastIndexOf(':') + 1));

export async function runPodLocally(t: Test, spec: any, o: LocalPodOptions): Promise<LocalPod> {
  const ports = new Map<number, number>();
  for (const c of spec.containers) for (const p of c.ports ?? []) if (!ports.has(p.containerPort)) ports.set(p.containerPort, await freePort());
  const port = (n: number): number => {
    const local = ports.get(n);
    if (local === undefined) throw new Error(`port ${n} is not a containerPort of the pod`);
    return local;
  };

  /** A text with every containerPort it names after `=`, `:` or `#` moved to its local port. */
  const movePorts = (text: string): string => text.replace(/(?<=[=:#])(\d+)(?!\d)/g, (n) => (ports.has(Number(n)) ? String(ports.get(Number(n))) : n));

  const dirs: string[] = [];
  // Registered before the programs start, so it runs after their teardowns have stopped them.
  t.teardown(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const volumes = new Map<string, string>();
  for (const v of spec.volumes ?? []) {
    const dir = mkdtempSync(join(tmpdir(), `kdt-pod-${v.name}-`));
    dirs.push(dir);
    if (v.configMap) for (const [k, text] of Object.entries(o.configMaps?.[v.configMap.name] ?? {})) writeFileSync(join(dir, k), movePorts(text));
    else if (!v.emptyDir) throw new Error(`volume ${v.name}: only configMap and emptyDir are run locally`);
    volumes.set(v.name, dir);
  }

  const resolvDir = mkdtempSync(join(tmpdir(), 'kdt-pod-resolv-'));
  dirs.push(resolvDir);
  const noUpstreams = join(resolvDir, 'resolv.conf');
  writeFileSync(noUpstreams, '');

  const programs = new Map<string, Program>();
  for (const c of spec.containers) {
    const mounts: [string, string][] = (c.volumeMounts ?? []).map((m: any) => [m.mountPath, volumes.get(m.name)!]);
    mounts.sort((a, b) => b[0].length - a[0].length);
    const local = (arg: string): string => {
      for (const [path, dir] of mounts) if (arg.includes(path)) return arg.replace(path, dir);
      return movePorts(arg);
    };
    let args: string[] = (c.args ?? []).map(local);
    const env: NodeJS.ProcessEnv = {};
    for (const e of c.env ?? []) env[e.name] = /^\d+$/.test(e.value) && ports.has(Number(e.value)) ? String(port(Number(e.value))) : e.value;
    const tmp = mounts.find(([path]) => path === '/tmp');
    if (tmp) env.TMPDIR = tmp[1];

    const program = programOf(c.image);
    args.push(...(o.extraArgs?.[program] ?? []));
    // The manifest's lame duck waits for a kube-proxy that loopback does not have.
    if (program === 'kube-dns') {
      args.push(NO_LAME_DUCK, '--dns-bind-address=127.0.0.1', '--http-bind-address=127.0.0.1', `--healthz-port=${port(kubeDnsFlags['healthz-port'].default)}`, `--kubecfg-file=${o.kubeconfig}`, `--resolv-conf=${noUpstreams}`);
    } else if (program === 'dnsmasq-nanny') {
      const dashdash = args.indexOf('--');
      const nanny = [NO_LAME_DUCK, `-metricsAddress=127.0.0.1:${port(portOfAddress(nannyFlags.metricsAddress.default))}`, `-kubednsServer=127.0.0.1:${port(portOfAddress(nannyFlags.kubednsServer.default))}`];
      const child = ['--listen-address=127.0.0.1', `--port=${port(defaultConfig().port)}`, '--no-resolv'];
      args = dashdash < 0 ? [...args, ...nanny, '--', ...child] : [...args.slice(0, dashdash), ...nanny, ...args.slice(dashdash), ...child];
    } else if (program === 'sidecar') {
      args.push(NO_LAME_DUCK, '--prometheus-addr=127.0.0.1', `--prometheus-port=${port(sidecarFlags['prometheus-port'].default)}`);
    } else {
      throw new Error(`no local run for ${program}`);
    }
    programs.set(c.name, startProgram(t, program, args, env));
  }

  return {
    port,
    programs,
    async probe(container, kind) {
      const c = spec.containers.find((x: any) => x.name === container);
      const get = c?.[kind]?.httpGet;
      if (!get) throw new Error(`${container} has no ${kind} httpGet`);
      const res = await fetch(`http://127.0.0.1:${port(get.port)}${get.path}`).catch(() => null);
      if (res === null) return 0;
      await res.arrayBuffer();
      return res.status;
    },
  };
}
