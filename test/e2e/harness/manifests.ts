// The shipped manifests (manifests/) as the tests read them: which files there are, the placeholder
// substitution manifests/README.md documents, and the objects after it.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../helpers/process.ts';

export const manifestsDir = join(repoRoot, 'manifests');

/** Every RBAC file kube-dns's ServiceAccount is bound by: the default one, then the optional modes'. */
export const RBAC_MANIFESTS = ['rbac.yaml', 'optional/rbac-endpoints.yaml', 'optional/rbac-service-entries.yaml'];

/** The values of the original's placeholders (kube-dns.yaml.base's __DNS__*__). */
export interface PlaceholderValues {
  /** __DNS__DOMAIN__: the cluster domain without the trailing dot. */
  domain: string;
  /** __DNS__SERVER__: the kube-dns Service's cluster IP. */
  server: string;
  /** __DNS__MEMORY__LIMIT__: the kubedns container's memory limit. */
  memoryLimit: string;
  /** __PILLAR__LOCAL__DNS__ (optional/node-local-dns.yaml): node-cache's link-local address. */
  localDns: string;
}

/** The values manifests/README.md's sed lines use (kubeadm's defaults; upstream's node-local address). */
export const README_VALUES: PlaceholderValues = { domain: 'cluster.local', server: '10.96.0.10', memoryLimit: '256Mi', localDns: '169.254.20.10' };

export const PLACEHOLDER = /__[A-Z]+(?:__[A-Z]+)*__/g;
/** node-local-dns.yaml's pillars that node-cache fills in itself at run time: they stay in the manifest. */
export const RUNTIME_PILLARS = ['__PILLAR__CLUSTER__DNS__', '__PILLAR__UPSTREAM__SERVERS__'];

/** Upstream's pillar names first: `__PILLAR__DNS__DOMAIN__` holds `__DNS__DOMAIN__`. */
export function substitute(text: string, v: PlaceholderValues): string {
  return text
    .replaceAll('__PILLAR__DNS__DOMAIN__', v.domain)
    .replaceAll('__PILLAR__DNS__SERVER__', v.server)
    .replaceAll('__PILLAR__LOCAL__DNS__', v.localDns)
    .replaceAll('__DNS__DOMAIN__', v.domain)
    .replaceAll('__DNS__SERVER__', v.server)
    .replaceAll('__DNS__MEMORY__LIMIT__', v.memoryLimit);
}

/** Every .yaml file under manifests/, relative to it, sorted. */
/** Not Kubernetes objects: Prometheus rules, their tests and a dashboard (test/unit/monitoring-rules.test.ts). */
const NOT_OBJECTS = new Set(['monitoring']);

/** Every file of Kubernetes objects under manifests/, relative to it, sorted. */
export function manifestFiles(dir = manifestsDir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (dir === manifestsDir && NOT_OBJECTS.has(name)) continue;
    if (statSync(path).isDirectory()) out.push(...manifestFiles(path).map((f) => join(name, f)));
    else if (name.endsWith('.yaml')) out.push(name);
  }
  return dir === manifestsDir ? out.sort() : out;
}

export function manifestText(file: string): string {
  return readFileSync(join(manifestsDir, file), 'utf8');
}

/** A Kubernetes object as plain JSON; tests reach into it freely. */
export type KubeObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };

/** The objects of one manifest file, placeholders replaced when values are given. Throws on a YAML error or warning. */
export function readManifest(file: string, values?: PlaceholderValues): KubeObject[] {
  const text = values ? substitute(manifestText(file), values) : manifestText(file);
  const objects: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) throw new Error(`${relative(repoRoot, join(manifestsDir, file))}: ${problem.message}`);
    const o = doc.toJS();
    if (o !== null) objects.push(o);
  }
  return objects;
}

/** The one object of a kind (and name) among `objects`; throws when there is not exactly one. */
export function only(objects: KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0];
}

/** optional/node-local-dns.yaml's Corefile template (upstream's) with the README's values: node-cache's -basecorefile. */
export function nodeLocalCorefile(): string {
  const cm = readManifest('optional/node-local-dns.yaml', README_VALUES).find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'node-local-dns');
  return cm!.data.Corefile as string;
}

/** kubeadm's Corefile as kubeadm writes it into ConfigMap coredns (bench/coredns-kubeadm.yaml, the CoreDNS objects kubeadm deploys). */
export function kubeadmCorefile(): string {
  const docs = parseAllDocuments(readFileSync(join(repoRoot, 'bench/coredns-kubeadm.yaml'), 'utf8')).map((d) => d.toJS());
  return docs.find((o) => o?.kind === 'ConfigMap' && o.metadata.name === 'coredns').data.Corefile as string;
}

/**
 * k3s's Corefile (../shared/reference/corefiles.md), on loopback for a test: `port`, the API through
 * `kubeconfig`, its NodeHosts `hosts` file re-read every `hostsReload`, `upstream` for forward, the
 * custom ConfigMap's imports from `custom` (a folder; relative to the Corefile's when not absolute),
 * and `ready` on its own port when given.
 */
export function k3sCorefile(o: { port: number; kubeconfig: string; nodeHosts: string; hostsReload: string; upstream: number; custom: string; ready?: number }): string {
  return `.:${o.port} {
    bind 127.0.0.1
    errors
${o.ready === undefined ? '' : `    ready 127.0.0.1:${o.ready}\n`}    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
      kubeconfig ${o.kubeconfig}
    }
    hosts ${o.nodeHosts} {
      ttl 60
      reload ${o.hostsReload}
      fallthrough
    }
    forward . 127.0.0.1:${o.upstream}
    cache 30
    loop
    reload
    loadbalance
    import ${o.custom}/*.override
}
import ${o.custom}/*.server
`;
}
