import { readFileSync } from 'node:fs';
import t from 'tap';
import { CLUSTER_KINDS } from '../../pkg/cluster/kinds.ts';
import { ClusterFileError, parseClusterFile } from '../../pkg/source/file-parse.ts';

const KINDS = CLUSTER_KINDS.map((k) => k.kind);

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

/** The ClusterFileError the text is rejected with. */
function rejection(text: string): ClusterFileError {
  try {
    parseClusterFile(text, KINDS);
  } catch (e) {
    if (e instanceof ClusterFileError) return e;
    throw e;
  }
  throw new Error('the text was accepted');
}

t.test('a multi-document stream', async (t) => {
  const p = parseClusterFile(fixture('cluster-multidoc.yaml'), KINDS);
  t.same(p.objects.map((o) => o.key), [
    'Service/default/web',
    'EndpointSlice/default/web-7fz2d',
    'ConfigMap/kube-system/kube-dns',
  ], 'the trailing empty document is no object and no error');
  t.equal(p.objects[1].kind, 'EndpointSlice');
  t.same(p.objects[1].object.metadata.labels, { 'kubernetes.io/service-name': 'web' });
  t.not(p.objects[0].digest, p.objects[1].digest, 'objects are told apart by digest');
});

t.test('JSON takes the fast road; its syntax errors still carry line and column', async (t) => {
  const json = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.0.0.1' } }] }, null, 2);
  const p = parseClusterFile(json, KINDS);
  t.same(p.objects.map((o) => o.key), ['Service/default/web']);
  t.equal(p.objects[0].digest, parseClusterFile(json.replace(/\n\s*/g, ''), KINDS).objects[0].digest, 'formatting does not change the digest');
  const err = t.throws(() => parseClusterFile('{\n  "kind": "List",\n  "items": [,]\n}\n', KINDS)) as ClusterFileError;
  t.equal(err.code, 'SOURCE_ERR_CLUSTER_FILE');
  t.equal(err.line, 3, 'broken JSON is located by the YAML parser');
  t.match(err.message, /syntax error/);
  const noKind = t.throws(() => parseClusterFile('{"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "x"}}]}', KINDS)) as ClusterFileError;
  t.match(noKind.reason, /List item #1 has no kind/);
});

t.test('a v1 List, with kinds DNS does not read skipped', async (t) => {
  const p = parseClusterFile(`apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: apps}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default}
- apiVersion: v1
  kind: Endpoints
  metadata: {name: legacy, namespace: apps}
- apiVersion: v1
  kind: Service
  metadata: {name: legacy}
`, KINDS);
  t.same(p.objects.map((o) => o.key), ['Endpoints/apps/legacy', 'Service/default/legacy'], 'no namespace reads as default');
  t.same(p.ignored, ['Namespace apps', 'Deployment default/web']);
});

t.test('a typed list from the raw API (items without kind), as JSON', async (t) => {
  const p = parseClusterFile(fixture('servicelist.json'), KINDS);
  t.same(p.objects.map((o) => o.key), ['Service/default/kubernetes', 'Service/kube-system/kube-dns']);
  t.equal(p.objects[0].object.kind, 'Service', 'the item kind comes from the list kind');
  t.same(parseClusterFile('{"kind": "ServiceList", "items": null}', KINDS).objects, [], 'null items: an empty list');
});

t.test('nothing at all is an empty cluster', async (t) => {
  t.same(parseClusterFile('', KINDS).objects, []);
  t.same(parseClusterFile('# just a comment\n', KINDS).objects, []);
  t.same(parseClusterFile('---\n---\n', KINDS).objects, []);
  t.same(parseClusterFile('apiVersion: v1\nkind: List\nitems: []\n', KINDS).objects, []);
});

t.test('duplicates: the later object wins', async (t) => {
  const p = parseClusterFile(`kind: Service
metadata: {name: a}
spec: {clusterIP: 10.0.0.1}
---
kind: Service
metadata: {name: a, namespace: default}
spec: {clusterIP: 10.0.0.2}
`, KINDS);
  t.equal(p.objects.length, 1);
  t.same((p.objects[0].object.spec as { clusterIP: string }).clusterIP, '10.0.0.2');
  t.same(p.duplicates, ['Service/default/a']);
});

t.test('malformed documents reject the whole text, with line and column', async (t) => {
  const good = 'kind: Service\nmetadata: {name: a}\n---\n';
  const cases: Array<[string, string, number, number, RegExp]> = [
    ['syntax error', good + 'kind: Service\nmetadata:\n  name: b\n   bad: [\n', 6, 0, /^YAML syntax error: /],
    ['tab indentation', good + 'kind: Service\n\tmetadata: {}\n', 5, 1, /^YAML syntax error: .*[Tt]ab/],
    ['duplicate key', 'kind: Service\nkind: Endpoints\nmetadata: {name: a}\n', 2, 1, /^YAML syntax error: .*unique/],
    ['a scalar document', good + 'just text\n', 4, 1, /^document #2 is a string, not a Kubernetes object$/],
    ['a sequence document', good + '- kind: Service\n', 4, 1, /^document #2 is a sequence, not a Kubernetes object$/],
    ['no kind', good + 'metadata: {name: b}\n', 4, 1, /^document #2 has no kind$/],
    ['no metadata', good + 'kind: Service\n', 4, 1, /^Service document #2 has no metadata$/],
    ['no name', good + 'kind: Service\nmetadata:\n  namespace: x\n', 4, 1, /^Service document #2 has no metadata.name$/],
    ['a non-string namespace', 'kind: Service\nmetadata: {name: a, namespace: [x]}\n', 1, 1, /metadata.namespace is not a string$/],
    ['an undefined alias', good + 'kind: Service\nmetadata: *nope\n', 4, 1, /^document #2: /],
    ['a List without items', 'kind: List\nmetadata: {}\n', 1, 1, /^document #1 is a List without items$/],
    ['a bad list item', 'kind: List\nitems:\n- kind: Service\n  metadata: {name: a}\n- kind: Service\n  metadata: {}\n', 5, 3,
      /^Service List item #2 has no metadata.name$/],
    ['a non-object list item', 'kind: List\nitems:\n- 42\n', 3, 3, /^List item #1 is a number, not a Kubernetes object$/],
    ['an ignored kind still needs a name', 'kind: Deployment\nmetadata: {}\n', 1, 1, /^Deployment document #1 has no metadata.name$/],
  ];
  for (const [what, text, line, col, reason] of cases) {
    const e = rejection(text);
    t.equal(e.code, 'SOURCE_ERR_CLUSTER_FILE', what);
    t.equal(e.line, line, `${what}: line`);
    if (col > 0) t.equal(e.col, col, `${what}: column`);
    t.match(e.reason, reason, `${what}: reason`);
    t.match(e.message, ` at line ${e.line}, column ${e.col}`);
  }
});
