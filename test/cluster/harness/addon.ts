// The addon deployed as manifests/README.md tells users to (rbac.yaml, then kube-dns.yaml with only
// the placeholders replaced), and pods to ask it from.

import { eventually } from '../../helpers/eventually.ts';
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

/**
 * optional/node-local-dns.yaml with the README's values applied; resolves once node-cache is ready on
 * the node (it serves 169.254.20.10 and the kube-dns ClusterIP there).
 */
export async function deployNodeLocalDns(c: NodeCluster): Promise<void> {
  await c.apply(readManifest('optional/node-local-dns.yaml', README_VALUES));
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
