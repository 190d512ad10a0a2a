// The addon deployed as manifests/README.md tells users to (rbac.yaml, then kube-dns.yaml with only
// the placeholders replaced), or kubeadm's coredns Deployment with our image, and pods to ask it from.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../../helpers/eventually.ts';
import { repoRoot } from '../../helpers/process.ts';
import { readManifest, README_VALUES } from '../../e2e/harness/manifests.ts';
import type { KubeObject } from '../../e2e/harness/manifests.ts';
import { CLIENT_IMAGE } from './cluster.ts';
import type { NodeCluster } from './cluster.ts';

/**
 * `eventually` for the cluster: every 500 ms, a probe's error counts as not yet (a pod still starting),
 * and a time out says what `explain()` finds.
 */
export async function waitFor(what: string, probe: () => Promise<unknown>, ms: number, explain: () => Promise<string> = async () => ''): Promise<void> {
  try {
    await eventually(() => probe().catch(() => null), what, ms, 500);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await explain().catch((e) => String(e))}`);
  }
}

/** What went wrong in a namespace: its pods, their events, and every container's last log lines. */
export async function describe(c: NodeCluster, namespace: string): Promise<string> {
  const out = [await c.kubectl(['-n', namespace, 'get', 'pods', '-o', 'wide']).catch(String)];
  out.push(await c.kubectl(['-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp']).catch(String));
  const pods = JSON.parse(await c.kubectl(['-n', namespace, 'get', 'pods', '-o', 'json'])).items as KubeObject[];
  for (const pod of pods) {
    for (const container of pod.spec.containers) {
      out.push(`--- ${pod.metadata.name}/${container.name}\n${await c.kubectl(['-n', namespace, 'logs', pod.metadata.name, '-c', container.name, '--tail=30']).catch(String)}`);
    }
  }
  return out.join('\n');
}

/** rbac.yaml and kube-dns.yaml applied; resolves once the Deployment has all its replicas available. */
export async function deployAddon(c: NodeCluster): Promise<KubeObject> {
  await c.apply(readManifest('rbac.yaml'));
  const objects = readManifest('kube-dns.yaml', README_VALUES);
  await c.apply(objects);
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  await waitFor('the kube-dns Deployment available', async () => {
    const d = await c.request('GET', '/apis/apps/v1/namespaces/kube-system/deployments/kube-dns');
    return d.status === 200 && d.body.status?.availableReplicas === deployment.spec.replicas;
  }, 180_000, () => describe(c, 'kube-system'));
  return deployment;
}

/** What differs between DaemonSets of upstream's node-local shape: the name (also its k8s-app label) and the container's own. */
export interface NodeLocalContainer {
  name: string;
  image: string;
  args: string[];
  capabilities: string[];
  volumeMounts: object[];
  volumes: object[];
}

/**
 * A DaemonSet in the shape of Kubernetes' nodelocaldns.yaml: host network, `dnsPolicy: Default`,
 * system-node-critical, every toleration, maxUnavailable 10%, host ports 53 and 9253 declared, a
 * liveness probe on the node-local address's /health only.
 */
export function nodeLocalDaemonSet(o: NodeLocalContainer): KubeObject {
  const labels = { 'k8s-app': o.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: o.name, namespace: 'kube-system', labels },
    spec: {
      updateStrategy: { rollingUpdate: { maxUnavailable: '10%' } },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { 'prometheus.io/port': '9253', 'prometheus.io/scrape': 'true' } },
        spec: {
          priorityClassName: 'system-node-critical',
          hostNetwork: true,
          dnsPolicy: 'Default',
          tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }, { effect: 'NoExecute', operator: 'Exists' }, { effect: 'NoSchedule', operator: 'Exists' }],
          containers: [{
            name: 'node-cache',
            image: o.image,
            resources: { requests: { cpu: '25m', memory: '5Mi' } },
            args: o.args,
            securityContext: { capabilities: { add: o.capabilities } },
            ports: [{ containerPort: 53, name: 'dns', protocol: 'UDP' }, { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' }, { containerPort: 9253, name: 'metrics', protocol: 'TCP' }],
            livenessProbe: { httpGet: { host: README_VALUES.localDns, path: '/health', port: 8080 }, initialDelaySeconds: 60, timeoutSeconds: 5 },
            volumeMounts: o.volumeMounts,
          }],
          volumes: o.volumes,
        },
      },
    },
  };
}

/** Upstream's own node-local-dns DaemonSet, with `image` in place of k8s-dns-node-cache: the drop-in check. */
export function upstreamNodeLocalDaemonSet(image: string): KubeObject {
  const d = nodeLocalDaemonSet({
    name: 'node-local-dns',
    image,
    args: ['-localip', `${README_VALUES.localDns},${README_VALUES.server}`, '-conf', '/etc/Corefile', '-upstreamsvc', 'kube-dns-upstream'],
    capabilities: ['NET_ADMIN'],
    volumeMounts: [
      { mountPath: '/run/xtables.lock', name: 'xtables-lock', readOnly: false },
      { name: 'config-volume', mountPath: '/etc/coredns' },
      { name: 'kube-dns-config', mountPath: '/etc/kube-dns' },
    ],
    volumes: [
      { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
      { name: 'kube-dns-config', configMap: { name: 'kube-dns', optional: true } },
      { name: 'config-volume', configMap: { name: 'node-local-dns', items: [{ key: 'Corefile', path: 'Corefile.base' }] } },
    ],
  });
  d.spec.template.spec.serviceAccountName = 'node-local-dns';
  return d;
}

/**
 * optional/node-local-dns.yaml with the README's values applied (its DaemonSet replaced by
 * `daemonSet` when given); resolves once node-cache is ready on the node (it serves 169.254.20.10 and
 * the kube-dns ClusterIP there).
 */
export async function deployNodeLocalDns(c: NodeCluster, daemonSet?: KubeObject): Promise<void> {
  const objects = readManifest('optional/node-local-dns.yaml', README_VALUES);
  await c.apply(daemonSet === undefined ? objects : objects.map((o) => (o.kind === 'DaemonSet' ? daemonSet : o)));
  await waitFor('node-local-dns ready on the node', async () => {
    const d = await c.request('GET', '/apis/apps/v1/namespaces/kube-system/daemonsets/node-local-dns');
    return d.status === 200 && d.body.status?.desiredNumberScheduled > 0 && d.body.status.numberReady === d.body.status.desiredNumberScheduled;
  }, 120_000, () => describe(c, 'kube-system'));
}

/** A client pod (dnsPolicy ClusterFirst: the kubelet's resolv.conf) in `namespace`, once it runs. */
export async function startClientPod(c: NodeCluster, namespace: string, name: string, labels: Record<string, string> = {}): Promise<void> {
  if ((await c.request('GET', `/api/v1/namespaces/${namespace}`)).status === 404) {
    await c.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }]);
  }
  await c.apply([{
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'client', image: CLIENT_IMAGE, imagePullPolicy: 'Never' }] },
  }]);
  await waitFor(`pod ${namespace}/${name} ready`, async () => {
    const p = await c.request('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
    return p.body.status?.conditions?.some((cond: { type: string; status: string }) => cond.type === 'Ready' && cond.status === 'True');
  }, 120_000, () => describe(c, namespace));
}

/** A command in a pod's container; resolves with stdout (rejects after `timeoutMs`, default a minute). */
export function execIn(c: NodeCluster, namespace: string, pod: string, command: string[], timeoutMs?: number): Promise<string> {
  return c.kubectl(['-n', namespace, 'exec', pod, '--', ...command], timeoutMs);
}

/** kubeadm's Service kube-dns (the coredns Deployment's pods behind the cluster DNS address). */
const KUBEADM_SERVICE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/name': 'CoreDNS' } },
  spec: {
    selector: { 'k8s-app': 'kube-dns' },
    clusterIP: README_VALUES.server,
    ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }, { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 }, { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 }],
  },
};

/**
 * kubeadm's CoreDNS objects (bench/coredns-kubeadm.yaml: ServiceAccount, ClusterRole and binding,
 * ConfigMap with kubeadm's Corefile, Deployment) and its Service, with only the Deployment's image
 * changed to `image`: `kubectl set image deployment/coredns coredns=<image>`. Waits for its replicas.
 */
export async function deployKubeadmCoreDns(c: NodeCluster, image: string): Promise<KubeObject> {
  const objects = parseAllDocuments(readFileSync(join(repoRoot, 'bench/coredns-kubeadm.yaml'), 'utf8')).map((d) => d.toJS() as KubeObject);
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  deployment.spec.template.spec.containers[0].image = image;
  await c.apply([...objects, KUBEADM_SERVICE]);
  await waitFor('the coredns Deployment available', async () => {
    const d = await c.request('GET', '/apis/apps/v1/namespaces/kube-system/deployments/coredns');
    return d.status === 200 && d.body.status?.availableReplicas === deployment.spec.replicas;
  }, 180_000, () => describe(c, 'kube-system'));
  return deployment;
}
