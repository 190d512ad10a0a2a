// The `visibility` ConfigMap key and the decision it drives: what an operator may write (and the
// error naming what is wrong), which namespace and Service a cluster name belongs to, and who sees it.

import t from 'tap';
import { ConfigError } from '../../pkg/config/errors.ts';
import { parseConfig } from '../../pkg/config/parse.ts';
import { parseVisibility } from '../../pkg/config/visibility.ts';
import { describePolicy, ownerOf, sees } from '../../pkg/visibility/visibility.ts';

t.test('absent or blank: no policy', async (t) => {
  t.equal(parseConfig({}).visibility, null);
  t.equal(parseConfig({ visibility: '  ' }).visibility, null);
});

t.test('a policy, with its defaults', async (t) => {
  const p = parseVisibility('{"allow": {"frontend": ["backend"], "monitoring": ["*"]}}');
  t.same(describePolicy(p), { allow: { frontend: ['backend'], monitoring: ['*'] }, shared: ['kube-system/kube-dns', 'default/kubernetes'], unknownAskers: 'allow' }, "kube-dns's and the API server's Services shared unsaid; unknown askers allowed");
  const q = parseVisibility('{"shared": ["platform", "default/kubernetes"], "unknownAskers": "deny"}');
  t.same(describePolicy(q), { allow: {}, shared: ['platform', 'default/kubernetes'], unknownAskers: 'deny' });
  t.same(describePolicy(parseVisibility('{}')), { allow: {}, shared: ['kube-system/kube-dns', 'default/kubernetes'], unknownAskers: 'allow' }, 'an empty object: each namespace sees its own');
});

t.test('what is wrong is named, with the key', async (t) => {
  const cases: [string, RegExp][] = [
    ['not json', /^visibility: invalid JSON/],
    ['["a"]', /expected a JSON object/],
    ['{"allow": ["a"]}', /"allow": expected an object/],
    ['{"allow": {"a": "b"}}', /"allow": "a": expected an array of strings/],
    ['{"allow": {"Bad_NS": []}}', /"Bad_NS" is not a namespace name/],
    ['{"allow": {"a": ["no way"]}}', /"no way" is not a namespace name/],
    ['{"shared": ["a/b/c"]}', /"a\/b\/c" is not "namespace" or "namespace\/service"/],
    ['{"shared": "a"}', /"shared": expected an array/],
    ['{"unknownAskers": "maybe"}', /"maybe" is neither "allow" nor "deny"/],
    ['{"allowed": {}}', /unknown field "allowed"/],
  ];
  for (const [text, message] of cases) {
    let err: unknown;
    try {
      parseConfig({ visibility: text });
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ConfigError && err.key === 'visibility', `${text}: a ConfigError of visibility`);
    t.match((err as Error).message, message);
  }
});

t.test('the owner of a cluster name', async (t) => {
  const zone = 'cluster.local';
  t.same(ownerOf('web.default.svc.cluster.local', zone), { namespace: 'default', service: 'web' });
  t.same(ownerOf('_https._tcp.web.default.svc.cluster.local', zone), { namespace: 'default', service: 'web' }, 'SRV');
  t.same(ownerOf('db-0.db.default.svc.cluster.local', zone), { namespace: 'default', service: 'db' }, 'an endpoint');
  t.same(ownerOf('default.svc.cluster.local', zone), { namespace: 'default', service: null }, "the namespace's own name");
  t.same(ownerOf('10-244-1-7.apps.pod.cluster.local', zone), { namespace: 'apps', service: null }, 'a pod record');
  t.same(ownerOf('web.default.east.svc.cluster.local', zone, new Map([['east', 'east.example.com']])), { namespace: 'default', service: 'web' }, 'a federation name');
  t.same(ownerOf('web.east.svc.cluster.local', zone, new Map([['east', 'east.example.com']])), { namespace: 'east', service: 'web' }, 'a Service of a namespace named as a federation');
  for (const name of ['cluster.local', 'svc.cluster.local', 'pod.cluster.local', 'web.default.other.cluster.local', 'example.com']) t.equal(ownerOf(name, zone), null, name);
});

t.test('who sees what', async (t) => {
  const p = parseVisibility('{"allow": {"frontend": ["backend"], "monitoring": ["*"]}, "shared": ["platform", "default/kubernetes"], "unknownAskers": "deny"}');
  const owner = (namespace: string, service: string | null = 'svc') => ({ namespace, service });
  t.ok(sees(p, 'backend', owner('backend')), 'its own namespace');
  t.ok(sees(p, 'frontend', owner('backend')), 'a namespace allowed');
  t.notOk(sees(p, 'backend', owner('frontend')), 'not the other way');
  t.ok(sees(p, 'monitoring', owner('anything')), '"*"');
  t.ok(sees(p, 'backend', owner('platform', 'any')), 'a shared namespace');
  t.ok(sees(p, 'backend', owner('default', 'kubernetes')), 'a shared Service');
  t.notOk(sees(p, 'backend', owner('default', 'web')), 'not its neighbours');
  t.notOk(sees(p, 'backend', owner('default', null)), 'nor its namespace');
  t.notOk(sees(p, undefined, owner('platform')), 'unknown askers: deny');
  t.ok(sees(parseVisibility('{}'), undefined, owner('x')), 'or allow');
});
