import t from 'tap';
import type { KubeObject } from '../../pkg/source/source.ts';
import {
  isDns1123Label,
  isDns1123Subdomain,
  trimConfigMap,
  trimEndpointSlice,
  trimEndpoints,
  trimService,
} from '../../pkg/cluster/trim.ts';

// Objects as `kubectl get -o yaml` gives them, built per test so each case changes one thing.
function service(spec: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'foo', namespace: 'default', ...meta }, spec };
}

function slice(extra: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'foo-abc12', namespace: 'default', labels: { 'kubernetes.io/service-name': 'foo' }, ...meta },
    addressType: 'IPv4',
    ...extra,
  };
}

t.test('DNS-1123 names', async (t) => {
  t.ok(isDns1123Label('a'));
  t.ok(isDns1123Label('kube-dns'));
  t.ok(isDns1123Label('a'.repeat(63)));
  for (const bad of ['', 'a'.repeat(64), '-a', 'a-', 'A', 'a_b', 'a.b', 5]) t.notOk(isDns1123Label(bad), String(bad));
  t.ok(isDns1123Subdomain('www.example.com'));
  t.ok(isDns1123Subdomain(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`), '253 characters');
  for (const bad of ['', 'a..b', '.a', 'a.', 'a_b.com', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`]) {
    t.notOk(isDns1123Subdomain(bad), bad);
  }
});

t.test('Service: ClusterIP, single and dual stack', async (t) => {
  const r = trimService(service({
    type: 'ClusterIP',
    clusterIP: '10.96.10.10',
    clusterIPs: ['10.96.10.10', 'FD00:10:96:0::A'],
    ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { port: 53, protocol: 'udp' }],
  }));
  t.same(r, {
    value: {
      namespace: 'default',
      name: 'foo',
      kind: 'ClusterIP',
      clusterIPs: ['10.96.10.10', 'fd00:10:96::a'],
      externalName: '',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: '', port: 53, protocol: 'UDP' }],
      publishNotReadyAddresses: false,
    },
    problems: [],
  });

  const old = trimService({ kind: 'Service', metadata: { name: 'old' }, spec: { clusterIP: '10.0.0.7' } });
  t.equal(old.value?.namespace, 'default', 'a missing namespace is "default"');
  t.same(old.value?.clusterIPs, ['10.0.0.7'], 'spec.clusterIP when spec.clusterIPs is absent');
  t.equal(old.value?.ports.length, 0);
  t.same(trimService(service({ type: 'NodePort', clusterIP: '10.0.0.8' })).value?.kind, 'ClusterIP', 'NodePort');
});

t.test('Service: a bad cluster IP is dropped; none left makes the service unusable', async (t) => {
  const r = trimService(service({ clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1', '10.0.0.300'] }));
  t.same(r.value?.clusterIPs, ['10.0.0.1']);
  t.same(r.problems, ['service default/foo: clusterIP "10.0.0.300" is not an IP, dropped']);

  const none = trimService(service({ clusterIP: '10.0.0.300' }));
  t.equal(none.value, null);
  t.same(none.problems, [
    'service default/foo: clusterIP "10.0.0.300" is not an IP, dropped',
    'service default/foo: no valid clusterIP left',
  ]);
});

t.test('Service: headless', async (t) => {
  for (const spec of [{ clusterIP: 'None' }, { clusterIP: 'None', clusterIPs: ['None'] }, { clusterIP: '' }, {}, { clusterIPs: ['None'] }]) {
    const r = trimService(service(spec));
    t.equal(r.value?.kind, 'Headless', JSON.stringify(spec));
    t.same(r.value?.clusterIPs, []);
    t.same(r.problems, []);
  }
  const noSpec = trimService({ kind: 'Service', metadata: { name: 'bare', namespace: 'x' } });
  t.equal(noSpec.value?.kind, 'Headless', 'a service without spec');
});

t.test('Service: publishNotReadyAddresses, from spec or the old annotation', async (t) => {
  t.equal(trimService(service({ clusterIP: 'None', publishNotReadyAddresses: true })).value?.publishNotReadyAddresses, true);
  const annotated = (v: string) =>
    trimService(service({ clusterIP: 'None' }, {
      annotations: { 'service.alpha.kubernetes.io/tolerate-unready-endpoints': v },
    })).value?.publishNotReadyAddresses;
  t.equal(annotated('true'), true);
  t.equal(annotated('false'), false);
  t.equal(annotated('yes'), false, 'only "true" counts');
});

t.test('Service: ExternalName', async (t) => {
  const r = trimService(service({ type: 'ExternalName', externalName: 'WWW.Example.COM.' }));
  t.same(r.value, {
    namespace: 'default',
    name: 'foo',
    kind: 'ExternalName',
    clusterIPs: [],
    externalName: 'www.example.com',
    ports: [],
    publishNotReadyAddresses: false,
  });
  t.same(r.problems, []);
  for (const bad of ['', 'bad_name.com', 'a..b', 'x'.repeat(64) + '.com', `${'a.'.repeat(127)}ab`, undefined, 7]) {
    const b = trimService(service({ type: 'ExternalName', externalName: bad }));
    t.equal(b.value, null, `externalName ${JSON.stringify(bad)}`);
    t.match(b.problems[0], /^service default\/foo: externalName .* is not a valid DNS name$/);
  }
});

t.test('Service: names that are not DNS-1123 labels make it unusable', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: 'Foo' }, 'service default/Foo: name "Foo" is not a DNS-1123 label'],
    [{ name: 'a.b' }, 'service default/a.b: name "a.b" is not a DNS-1123 label'],
    [{ name: 'x'.repeat(64) }, `service default/${'x'.repeat(64)}: name "${'x'.repeat(64)}" is not a DNS-1123 label`],
    [{ namespace: 'Kube_System' }, 'service Kube_System/foo: namespace "Kube_System" is not a DNS-1123 label'],
    [{ name: undefined }, 'service default/<no name>: metadata.name is missing'],
  ];
  for (const [meta, problem] of cases) {
    const r = trimService(service({ clusterIP: '10.0.0.1' }, meta));
    t.equal(r.value, null);
    t.same(r.problems, [problem]);
  }
  const junk = trimService(null as unknown as KubeObject);
  t.equal(junk.value, null, 'not even an object: a problem, no throw');
});

t.test('ports: each bad entry is dropped with its reason', async (t) => {
  const r = trimService(service({
    clusterIP: '10.0.0.1',
    ports: [
      { name: 'ok', port: 443 },
      { name: 'zero', port: 0 },
      { name: 'big', port: 65536 },
      { name: 'text', port: '80' },
      { name: 'none' },
      { name: 'proto', port: 80, protocol: 'ICMP' },
      { name: 'Bad_Name', port: 80 },
      'junk',
      { name: 'sctp', port: 9, protocol: 'sctp' },
    ],
  }));
  t.same(r.value?.ports, [{ name: 'ok', port: 443, protocol: 'TCP' }, { name: 'sctp', port: 9, protocol: 'SCTP' }]);
  t.same(r.problems, [
    'service default/foo: port #1 (zero) port 0 is not 1-65535, dropped',
    'service default/foo: port #2 (big) port 65536 is not 1-65535, dropped',
    'service default/foo: port #3 (text) port "80" is not 1-65535, dropped',
    'service default/foo: port #4 (none) port missing is not 1-65535, dropped',
    'service default/foo: port #5 (proto) protocol "ICMP" is not TCP, UDP or SCTP, dropped',
    'service default/foo: port #6 (Bad_Name) name "Bad_Name" is not a DNS-1123 label, dropped',
    'service default/foo: port #7 is not an object, dropped',
  ]);
  const notList = trimService(service({ clusterIP: '10.0.0.1', ports: { name: 'x' } }));
  t.same(notList.problems, ['service default/foo: ports is not a list, ignored']);
});

t.test('EndpointSlice: endpoints, hostnames, readiness, ports', async (t) => {
  const r = trimEndpointSlice(slice({
    endpoints: [
      { addresses: ['10.244.1.20'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['10.244.1.21'], conditions: {} }, // nil ready counts as ready
      { addresses: ['10.244.1.22'], hostname: 'db-2', conditions: { ready: false } },
      { addresses: ['10.244.1.23'] },
    ],
    ports: [{ name: 'postgres', port: 5432, protocol: 'TCP' }, { name: '', port: null, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }],
  }));
  t.same(r, {
    value: {
      namespace: 'default',
      service: 'foo',
      id: 'slice/foo-abc12',
      endpoints: [
        { addresses: ['10.244.1.20'], hostname: 'db-0', ready: true },
        { addresses: ['10.244.1.21'], hostname: '', ready: true },
        { addresses: ['10.244.1.22'], hostname: 'db-2', ready: false },
        { addresses: ['10.244.1.23'], hostname: '', ready: true },
      ],
      ports: [{ name: 'postgres', port: 5432, protocol: 'TCP' }, { name: '', port: 53, protocol: 'UDP' }],
    },
    problems: [],
  }, 'a null port ("all ports") is dropped without a problem');

  const v6 = trimEndpointSlice(slice({ addressType: 'IPv6', endpoints: [{ addresses: ['FD00:10:244:1:0:0:0:5'] }] }));
  t.same(v6.value?.endpoints, [{ addresses: ['fd00:10:244:1::5'], hostname: '', ready: true }]);
});

t.test("EndpointSlice with pod names (CoreDNS's endpoint_pod_names): an endpoint without a hostname takes its pod's", async (t) => {
  const obj = slice({
    endpoints: [
      { addresses: ['10.244.1.20'], hostname: 'db-0', targetRef: { kind: 'Pod', name: 'db-7f9c-abcde' } },
      { addresses: ['10.244.1.21'], targetRef: { kind: 'Pod', name: 'web-7f9c-x2k4p' } },
      { addresses: ['10.244.1.22'], targetRef: { kind: 'Pod', name: 'dotted.pod.name' } },
      { addresses: ['10.244.1.23'] },
    ],
  });
  t.same(trimEndpointSlice(obj, true).value?.endpoints.map((e) => e.hostname), ['db-0', 'web-7f9c-x2k4p', '', ''], 'its hostname first; a pod name of several labels, or none: named by the address');
  t.same(trimEndpointSlice(obj).value?.endpoints.map((e) => e.hostname), ['db-0', '', '', ''], 'without: the hostname only');
});

t.test('EndpointSlice: bad parts dropped', async (t) => {
  const r = trimEndpointSlice(slice({
    endpoints: [
      { addresses: ['10.0.0.1', '10.0.0.999', 'fd00::1'], hostname: 'Not_A_Label' },
      { addresses: ['bogus'] },
      { addresses: [] },
      42,
    ],
  }));
  t.same(r.value?.endpoints, [{ addresses: ['10.0.0.1'], hostname: '', ready: true }]);
  t.same(r.problems, [
    'endpointslice default/foo-abc12: endpoint #0 address "10.0.0.999" is not an IP, dropped',
    'endpointslice default/foo-abc12: endpoint #0 address fd00::1 is not IPv4 like the slice, dropped',
    'endpointslice default/foo-abc12: endpoint #0 hostname "Not_A_Label" is not a DNS-1123 label, dropped',
    'endpointslice default/foo-abc12: endpoint #1 address "bogus" is not an IP, dropped',
    'endpointslice default/foo-abc12: endpoint #1 has no valid address, dropped',
    'endpointslice default/foo-abc12: endpoint #2 has no valid address, dropped',
    'endpointslice default/foo-abc12: endpoint #3 is not an object, dropped',
  ]);
});

t.test('EndpointSlice: unusable slices', async (t) => {
  const cases: Array<[KubeObject, string]> = [
    [slice({}, { labels: {} }), 'endpointslice default/foo-abc12: label kubernetes.io/service-name is missing'],
    [slice({}, { labels: { 'kubernetes.io/service-name': 'Foo' } }),
      'endpointslice default/foo-abc12: label kubernetes.io/service-name "Foo" is not a DNS-1123 label'],
    [slice({ addressType: 'FQDN' }), 'endpointslice default/foo-abc12: addressType FQDN is not served by DNS, ignored'],
    [slice({ addressType: undefined }), 'endpointslice default/foo-abc12: addressType undefined is not IPv4, IPv6 or FQDN'],
    [slice({}, { namespace: 'Bad' }), 'endpointslice Bad/foo-abc12: namespace "Bad" is not a DNS-1123 label'],
    [slice({}, { name: 'Foo_1' }), 'endpointslice default/Foo_1: name is not a DNS-1123 subdomain'],
    [slice({}, { name: '' }), 'endpointslice default/<no name>: metadata.name is missing'],
  ];
  for (const [obj, problem] of cases) {
    const r = trimEndpointSlice(obj);
    t.equal(r.value, null, problem);
    t.same(r.problems, [problem]);
  }
});

t.test('Endpoints: one set per subset, notReadyAddresses not ready', async (t) => {
  const r = trimEndpoints({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'legacy', namespace: 'apps' },
    subsets: [
      {
        addresses: [{ ip: '10.244.3.40', hostname: 'legacy-0' }, { ip: '10.244.3.41' }],
        notReadyAddresses: [{ ip: '10.244.2.42', hostname: 'legacy-2' }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
      { addresses: [{ ip: 'fd00::2' }], ports: [{ name: 'metrics', port: 9090 }] },
    ],
  });
  t.same(r, {
    value: [
      {
        namespace: 'apps',
        service: 'legacy',
        id: 'endpoints/legacy/0',
        endpoints: [
          { addresses: ['10.244.3.40'], hostname: 'legacy-0', ready: true },
          { addresses: ['10.244.3.41'], hostname: '', ready: true },
          { addresses: ['10.244.2.42'], hostname: 'legacy-2', ready: false },
        ],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
      {
        namespace: 'apps',
        service: 'legacy',
        id: 'endpoints/legacy/1',
        endpoints: [{ addresses: ['fd00::2'], hostname: '', ready: true }],
        ports: [{ name: 'metrics', port: 9090, protocol: 'TCP' }],
      },
    ],
    problems: [],
  });

  t.same(trimEndpoints({ kind: 'Endpoints', metadata: { name: 'empty' } }), { value: [], problems: [] }, 'no subsets');
});

t.test('Endpoints: bad parts dropped, bad names unusable', async (t) => {
  const r = trimEndpoints({
    kind: 'Endpoints',
    metadata: { name: 'legacy', namespace: 'apps' },
    subsets: [
      'junk',
      { addresses: [{ ip: '10.0.0.1', hostname: 'x.y' }, { ip: '300.0.0.1' }, { hostname: 'no-ip' }] },
    ],
  });
  t.same(r.value, [{
    namespace: 'apps',
    service: 'legacy',
    id: 'endpoints/legacy/1',
    endpoints: [{ addresses: ['10.0.0.1'], hostname: '', ready: true }],
    ports: [],
  }], 'subset ids keep their index in the object');
  t.same(r.problems, [
    'endpoints apps/legacy: subset #0 is not an object, dropped',
    'endpoints apps/legacy: subset #1 addresses #0 hostname "x.y" is not a DNS-1123 label, dropped',
    'endpoints apps/legacy: subset #1 addresses #1 address "300.0.0.1" is not an IP, dropped',
    'endpoints apps/legacy: subset #1 addresses #2 address undefined is not an IP, dropped',
  ]);
  const bad = trimEndpoints({ kind: 'Endpoints', metadata: { name: 'My.Svc', namespace: 'apps' } });
  t.same(bad, { value: null, problems: ['endpoints apps/My.Svc: name "My.Svc" is not a DNS-1123 label'] });
});

t.test('ConfigMap', async (t) => {
  t.same(trimConfigMap({ kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' } }), {
    value: { namespace: 'kube-system', name: 'kube-dns', data: {} },
    problems: [],
  }, 'no data');
  const r = trimConfigMap({
    kind: 'ConfigMap',
    metadata: { name: 'kube-dns', namespace: 'kube-system' },
    data: { upstreamNameservers: '["8.8.8.8"]', stubDomains: '{"acme.local": ["1.2.3.4"]}', port: 53, nested: { a: 'b' } },
  });
  t.same(r.value?.data, { upstreamNameservers: '["8.8.8.8"]', stubDomains: '{"acme.local": ["1.2.3.4"]}' });
  t.same(r.problems, [
    'configmap kube-system/kube-dns: data key "port" is not a string, dropped',
    'configmap kube-system/kube-dns: data key "nested" is not a string, dropped',
  ]);
  t.same(trimConfigMap({ kind: 'ConfigMap', metadata: { name: 'x' }, data: ['a'] }).problems,
    ['configmap default/x: data is not a mapping, ignored']);
  t.same(trimConfigMap({ kind: 'ConfigMap', metadata: { name: 'dns.config' } }).value?.name, 'dns.config',
    'ConfigMap names are subdomains');
  t.equal(trimConfigMap({ kind: 'ConfigMap', metadata: { name: 'Bad' } }).value, null);
  t.equal(trimConfigMap({ kind: 'ConfigMap', metadata: { name: 'x', namespace: 'A' } }).value, null);
  t.equal(trimConfigMap({ kind: 'ConfigMap', metadata: {} } as KubeObject).value, null);
});
