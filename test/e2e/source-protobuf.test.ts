// Lists in protobuf against a real kube-apiserver: for every kind kube-dns lists in protobuf, the
// objects the API server serves, read from protobuf with the kind's fields, trim to exactly what the
// same objects trim to from JSON (values, problems, the versions the relist diff keys on). The objects
// cover every field a trim reads, its unset and its odd values.

import t from 'tap';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { connectKube } from '../../pkg/source/kubernetes-client.ts';
import { PROTOBUF_CONTENT_TYPE, decodeProtobufList } from '../../pkg/source/kubernetes-protobuf.ts';
import { statusMessage } from '../../pkg/source/kubernetes-reflector.ts';
import type { ProtoSchema } from '../../pkg/source/kubernetes-protobuf.ts';
import type { KubeObject } from '../../pkg/source/source.ts';
import { CLUSTER_KINDS } from '../../pkg/cluster/kinds.ts';
import { trimService } from '../../pkg/cluster/trim-service.ts';
import { trimEndpointSlice, trimEndpoints } from '../../pkg/cluster/trim-endpoints.ts';
import { trimConfigMap } from '../../pkg/cluster/trim-configmap.ts';
import { trimNode } from '../../pkg/cluster/trim-node.ts';
import { POD_FIELDS, trimPod } from '../../pkg/autopath/trim.ts';
import { NODE_SENDER_FIELDS, nodeSenderAddresses } from '../../pkg/autopath/trim-node.ts';

const ns = 'proto';
const port = (name: string, p: number, protocol = 'TCP') => ({ name, port: p, protocol });

const OBJECTS = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'dual', namespace: ns }, spec: { ipFamilyPolicy: 'PreferDualStack', ports: [port('http', 80), port('dns', 53, 'UDP'), { name: 'web', port: 81, targetPort: 'web' }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'headless', namespace: ns, annotations: { 'service.alpha.kubernetes.io/tolerate-unready-endpoints': 'true', other: 'x' } }, spec: { clusterIP: 'None', ports: [port('http', 80)] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'unready', namespace: ns }, spec: { clusterIP: 'None', publishNotReadyAddresses: true } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: ns }, spec: { type: 'ExternalName', externalName: 'example.com.' } },
  {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'headless-a', namespace: ns, labels: { 'kubernetes.io/service-name': 'headless' }, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-11-27T10:00:00Z' } },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['10.5.0.1'], hostname: 'web-0', conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'web-0', namespace: ns }, nodeName: 'n1', zone: 'z' },
      { addresses: ['10.5.0.2'], conditions: { ready: false, serving: true, terminating: true }, targetRef: { kind: 'Pod', name: 'web-1', namespace: ns } },
      { addresses: ['10.5.0.3'], conditions: {} },
      { addresses: ['10.5.0.4', '10.5.0.5'] },
    ],
    ports: [port('http', 8080), { name: 'all' }, { port: 9090, protocol: 'UDP' }],
  },
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'headless-b', namespace: ns, labels: { 'kubernetes.io/service-name': 'headless' } }, addressType: 'IPv6', endpoints: [{ addresses: ['fd00::5'], hostname: 'web-2' }], ports: [] },
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'fqdn', namespace: ns, labels: { 'kubernetes.io/service-name': 'ext' } }, addressType: 'FQDN', endpoints: [{ addresses: ['a.example.com'] }] },
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'orphan', namespace: ns }, addressType: 'IPv4', endpoints: [] },
  {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'headless', namespace: ns },
    subsets: [
      { addresses: [{ ip: '10.5.0.1', hostname: 'web-0' }, { ip: '10.5.0.9' }], notReadyAddresses: [{ ip: '10.5.0.2', hostname: 'web-1' }], ports: [port('http', 8080), { name: 'dns', port: 53, protocol: 'UDP' }] },
      { addresses: [{ ip: '10.5.0.7' }], ports: [port('', 9000)] },
    ],
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: ns }, data: JSON.parse('{"stubDomains": "{\\"acme.local\\": [\\"1.2.3.4\\"]}", "__proto__": "a key, not the prototype", "empty": ""}') },
  {
    apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'Z1', 'topology.kubernetes.io/region': 'r1' }, annotations: { 'projectcalico.org/IPv4VXLANTunnelAddr': '10.244.1.0' } },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:244:1::/64'] },
  },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2', labels: { 'failure-domain.beta.kubernetes.io/zone': 'z2' } }, spec: {} },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: ns, labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'host', namespace: ns }, spec: { nodeName: 'n1', hostNetwork: true, containers: [{ name: 'c', image: 'i' }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'custom', namespace: ns }, spec: { nodeName: 'n1', dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: [{ name: 'ndots', value: '2' }] }, containers: [{ name: 'c', image: 'i' }] } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done', namespace: ns }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } },
];

const TRIMS: Record<string, (o: KubeObject) => unknown> = {
  Service: trimService,
  EndpointSlice: (o) => trimEndpointSlice(o),
  Endpoints: trimEndpoints,
  ConfigMap: trimConfigMap,
  Node: trimNode,
};

/** What a kubelet reports: addresses on the pods, on the nodes. */
const STATUSES: [string, object][] = [
  [`/api/v1/namespaces/${ns}/pods/web-0/status`, { status: { phase: 'Running', podIP: '10.5.0.1', podIPs: [{ ip: '10.5.0.1' }, { ip: 'fd00::1' }], hostIP: '192.0.2.1' } }],
  [`/api/v1/namespaces/${ns}/pods/host/status`, { status: { phase: 'Running', podIP: '192.0.2.1', hostIP: '192.0.2.1' } }],
  [`/api/v1/namespaces/${ns}/pods/custom/status`, { status: { phase: 'Running', podIP: '10.5.0.3', hostIP: '192.0.2.1' } }],
  [`/api/v1/namespaces/${ns}/pods/done/status`, { status: { phase: 'Succeeded', podIP: '10.5.0.4' } }],
  ['/api/v1/nodes/n1/status', { status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }, { type: 'Hostname', address: 'n1' }, { type: 'ExternalIP', address: '198.51.100.1' }] } }],
];

t.test('every kind listed in protobuf trims as it does from JSON', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  await cluster.apply(OBJECTS);
  for (const [path, body] of STATUSES) {
    const r = await cluster.request('PATCH', path, body);
    t.equal(r.status, 200, `status of ${path}`);
  }
  const client = await connectKube({ kubeconfig: cluster.kubeconfig(cluster.adminToken) });
  const list = async (path: string, accept: string): Promise<{ type: string; body: Buffer }> => {
    const res = await client.get(path, AbortSignal.timeout(10_000), accept);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    t.equal(res.statusCode, 200, `${path} as ${accept}`);
    return { type: res.headers['content-type'] ?? '', body: Buffer.concat(chunks) };
  };

  const cases: [what: string, path: string, schema: ProtoSchema, trim: (o: KubeObject) => unknown][] = [
    ...CLUSTER_KINDS.map((k): [string, string, ProtoSchema, (o: KubeObject) => unknown] => [k.kind, `${k.api}/${k.resource}`, k.protobuf!, TRIMS[k.kind]]),
    ['EndpointSlice named by pod', '/apis/discovery.k8s.io/v1/endpointslices', CLUSTER_KINDS[1].protobuf!, (o) => trimEndpointSlice(o, true)],
    ['Pod', '/api/v1/pods', POD_FIELDS, trimPod],
    ['Node as node-cache sender', '/api/v1/nodes', NODE_SENDER_FIELDS, (o) => [trimNode(o), nodeSenderAddresses(o)]],
  ];
  for (const [what, path, schema, trim] of cases) {
    t.ok(schema, `${what}: listed in protobuf`);
    const json = await list(path, 'application/json');
    const proto = await list(path, `${PROTOBUF_CONTENT_TYPE}, application/json`);
    t.equal(proto.type, PROTOBUF_CONTENT_TYPE, `${what}: served in protobuf`);
    const fromJson = JSON.parse(json.body.toString('utf8')) as { metadata: { resourceVersion: string }; items: KubeObject[] };
    const fromProto = decodeProtobufList(proto.body, schema) as unknown as { metadata: { resourceVersion: string }; items: KubeObject[] };
    const ours = (items: KubeObject[]) => items.filter((o) => o.metadata.namespace === ns || !o.metadata.namespace);
    t.ok(ours(fromJson.items).length > 0, `${what}: objects of this test listed`);
    t.same(fromProto.items.map((o) => [o.metadata.namespace, o.metadata.name, o.metadata.resourceVersion]), fromJson.items.map((o) => [o.metadata.namespace, o.metadata.name, o.metadata.resourceVersion]), `${what}: the same objects and versions`);
    t.same(ours(fromProto.items).map(trim), ours(fromJson.items).map(trim), `${what}: trimmed alike`);
    // Both lists were served from the same state: one resourceVersion.
    t.ok(/^\d+$/.test(fromProto.metadata.resourceVersion), `${what}: the list's resourceVersion`);
  }
});

t.test('an error answered in protobuf says what the API server said', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  // kube-dns's own RBAC does not let it list Secrets.
  const client = await connectKube({ kubeconfig: cluster.kubeconfig(cluster.kubeDnsToken) });
  const res = await client.get('/api/v1/secrets?limit=500', AbortSignal.timeout(10_000), `${PROTOBUF_CONTENT_TYPE}, application/json`);
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  t.equal(res.statusCode, 403);
  t.equal(res.headers['content-type'], PROTOBUF_CONTENT_TYPE, 'the Status comes in protobuf');
  t.match(statusMessage(403, Buffer.concat(chunks), res.headers['content-type']), /^HTTP 403: secrets is forbidden: User "system:serviceaccount:kube-system:kube-dns" cannot list resource "secrets"/);
});

