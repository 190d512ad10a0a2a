import t from 'tap';
import { ClusterStore } from '../../pkg/cluster/store.ts';
import { CLUSTER_KINDS } from '../../pkg/cluster/kinds.ts';
import type { KubeObject } from '../../pkg/source/source.ts';

/** A store and what it tells its listener; synced first unless `unsynced` (flushes before the first sync are held). */
function recorder(unsynced = false) {
  const batches: string[][] = [];
  const rejected: string[] = [];
  const configs: Array<string | null> = [];
  let synced = 0;
  /** How many batches the listener had heard of when it heard of the sync. */
  let batchesAtSync = -1;
  const store = new ClusterStore({
    servicesChanged: (keys) => batches.push([...keys].sort()),
    configMapChanged: (cm, name) => configs.push(cm ? `${name}:${JSON.stringify(cm.data)}` : null),
    rejected: (kind, problem) => rejected.push(`${kind}: ${problem}`),
    synced: () => {
      synced++;
      batchesAtSync = batches.length;
    },
  }, CLUSTER_KINDS);
  if (!unsynced) store.synced();
  return { store, batches, rejected, configs, synced: () => synced, batchesAtSync: () => batchesAtSync };
}

const svc = (name: string, ip: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { clusterIP: ip } });
const slice = (name: string, service: string, ips: string[]): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  endpoints: ips.map((ip) => ({ addresses: [ip] })),
});

t.test('a batch of events names each touched service once, on flush', async (t) => {
  const r = recorder();
  r.store.event({ type: 'add', kind: 'Service', object: svc('a', '10.0.0.1') });
  r.store.event({ type: 'add', kind: 'EndpointSlice', object: slice('a-1', 'a', ['10.1.0.1']) });
  r.store.event({ type: 'add', kind: 'EndpointSlice', object: slice('a-2', 'a', ['10.1.0.2', '10.1.0.3']) });
  t.same(r.batches, [], 'nothing before flush');
  r.store.flush();
  t.same(r.batches, [['default/a']]);
  t.same(r.store.counts(), { services: 1, endpointSets: 2, endpoints: 3 });
  r.store.flush();
  t.equal(r.batches.length, 1, 'an empty flush reports nothing');
});

t.test('before the first sync nothing is built: every service touched is named once, at synced(), before the listener hears of the sync', async (t) => {
  const r = recorder(true);
  r.store.event({ type: 'add', kind: 'Service', object: svc('a', '10.0.0.1') });
  r.store.flush();
  r.store.event({ type: 'add', kind: 'EndpointSlice', object: slice('a-1', 'a', ['10.1.0.1']) });
  r.store.event({ type: 'add', kind: 'Service', object: svc('b', '10.0.0.2') });
  r.store.flush();
  t.same(r.batches, [], 'list pages before the sync build nothing');
  t.notOk(r.store.hasSynced);
  r.store.synced();
  t.same(r.batches, [['default/a', 'default/b']], 'one build of each');
  t.equal(r.synced(), 1);
  t.equal(r.batchesAtSync(), 1, 'built before the sync is announced');
  t.ok(r.store.hasSynced);
  r.store.event({ type: 'add', kind: 'EndpointSlice', object: slice('b-1', 'b', ['10.1.0.2']) });
  r.store.flush();
  t.same(r.batches.at(-1), ['default/b'], 'after it, each flush builds what it touched');
});

t.test('a slice that changes service label leaves its old service', async (t) => {
  const r = recorder();
  r.store.event({ type: 'add', kind: 'EndpointSlice', object: slice('x-1', 'a', ['10.1.0.1']) });
  r.store.event({ type: 'update', kind: 'EndpointSlice', object: slice('x-1', 'b', ['10.1.0.1']) });
  r.store.flush();
  t.same(r.batches, [['default/a', 'default/b']]);
  t.same(r.store.endpointSets('default/a'), []);
  t.equal(r.store.endpointSets('default/b').length, 1);
  r.store.event({ type: 'delete', kind: 'EndpointSlice', object: slice('x-1', 'b', []) });
  r.store.flush();
  t.same(r.store.counts(), { services: 0, endpointSets: 0, endpoints: 0 });
});

t.test('an update DNS cannot use removes the old version and is reported', async (t) => {
  const r = recorder();
  r.store.event({ type: 'add', kind: 'Service', object: svc('a', '10.0.0.1') });
  r.store.event({ type: 'update', kind: 'Service', object: svc('a', '10.0.0.999') });
  r.store.flush();
  t.notOk(r.store.services.has('default/a'), 'not served with stale data');
  t.match(r.rejected.join('\n'), /Service: .*10\.0\.0\.999/);
  r.store.event({ type: 'delete', kind: 'Service', object: svc('a', '') });
  r.store.flush();
  t.same(r.batches, [['default/a']], 'deleting what is already gone touches nothing');
});

t.test('core/v1 Endpoints subsets replace each other as a whole', async (t) => {
  const r = recorder();
  const ep = (ips: string[][]): KubeObject => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'legacy', namespace: 'default' }, subsets: ips.map((s) => ({ addresses: s.map((ip) => ({ ip })) })) });
  r.store.event({ type: 'add', kind: 'Endpoints', object: ep([['10.2.0.1'], ['10.2.0.2']]) });
  r.store.flush();
  t.equal(r.store.endpointSets('default/legacy').length, 2);
  r.store.event({ type: 'update', kind: 'Endpoints', object: ep([['10.2.0.3']]) });
  r.store.flush();
  t.same(r.store.endpointSets('default/legacy').map((s) => s.endpoints.map((e) => e.addresses[0])), [['10.2.0.3']]);
});

t.test('ConfigMaps are handed on trimmed; deletes as null', async (t) => {
  const r = recorder();
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' }, data: { upstreamNameservers: '["1.2.3.4"]' } };
  r.store.event({ type: 'add', kind: 'ConfigMap', object: cm });
  r.store.event({ type: 'delete', kind: 'ConfigMap', object: cm });
  t.same(r.configs, ['kube-dns:{"upstreamNameservers":"[\\"1.2.3.4\\"]"}', null]);
});
