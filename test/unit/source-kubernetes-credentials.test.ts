import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestOptions } from 'node:https';
import { inClusterCredentials, kubeconfigCredentials } from '../../pkg/source/kubernetes-credentials.ts';

function kubeconfig(user: string, cluster = 'server: https://10.0.0.1:6443\n    certificate-authority: ca.crt'): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-kubeconfig-'));
  writeFileSync(join(dir, 'ca.crt'), 'CA PEM');
  writeFileSync(join(dir, 'token'), 'file-token\n');
  writeFileSync(
    join(dir, 'config'),
    `apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: k, user: u}
- name: other
  context: {cluster: k, user: nobody}
clusters:
- name: k
  cluster:
    ${cluster}
users:
- name: u
  user:
${user
  .split('\n')
  .map((l) => '    ' + l)
  .join('\n')}
`,
  );
  return join(dir, 'config');
}

function applied(path: string, master = ''): { server: string; identity: string; opts: RequestOptions } {
  const c = kubeconfigCredentials(path, master);
  if (!c) throw new Error('expected credentials');
  const opts: RequestOptions = { headers: { Accept: 'application/json' } };
  c.apply(opts);
  return { server: c.server, identity: c.identity, opts };
}

t.test('a bearer token, the CA file relative to the kubeconfig, --kube-master-url overriding the server', async (t) => {
  const r = applied(kubeconfig('token: abc'), 'https://api.example:443');
  t.equal(r.server, 'https://api.example:443');
  t.same(r.opts.headers, { Accept: 'application/json', Authorization: 'Bearer abc' });
  t.equal(String(r.opts.ca), 'CA PEM');
  t.equal(r.opts.rejectUnauthorized, true);
  t.match(r.identity, /bearer token of kubeconfig user "u"/);
  t.notMatch(r.identity, /abc/, 'the token is never in the identity line');
});

t.test('a token file is read (and re-read later), client certificates and basic auth', async (t) => {
  t.same(applied(kubeconfig('tokenFile: token')).opts.headers, { Accept: 'application/json', Authorization: 'Bearer file-token' });
  const cert = applied(kubeconfig(`client-certificate-data: ${Buffer.from('CERT').toString('base64')}\nclient-key-data: ${Buffer.from('KEY').toString('base64')}`));
  t.equal(String(cert.opts.cert), 'CERT');
  t.equal(String(cert.opts.key), 'KEY');
  t.same(cert.opts.headers, { Accept: 'application/json' }, 'no Authorization header');
  t.same(applied(kubeconfig('username: admin\npassword: secret')).opts.headers, { Accept: 'application/json', Authorization: `Basic ${Buffer.from('admin:secret').toString('base64')}` });
  const insecure = applied(kubeconfig('token: x', 'server: https://10.0.0.1:6443\n    insecure-skip-tls-verify: true'));
  t.equal(insecure.opts.rejectUnauthorized, false);
});

t.test('a kubeconfig in JSON, and one in YAML that starts with a flow mapping (not JSON), read alike', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-kubeconfig-'));
  const config = { apiVersion: 'v1', 'current-context': 'c', contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }], clusters: [{ name: 'k', cluster: { server: 'https://10.0.0.2:6443' } }], users: [{ name: 'u', user: { token: 'abc' } }] };
  writeFileSync(join(dir, 'json'), JSON.stringify(config, null, 2));
  writeFileSync(join(dir, 'flow'), "{apiVersion: v1, current-context: c, contexts: [{name: c, context: {cluster: k, user: u}}], clusters: [{name: k, cluster: {server: 'https://10.0.0.2:6443'}}], users: [{name: u, user: {token: abc}}]}\n");
  for (const file of ['json', 'flow']) {
    const r = applied(join(dir, file));
    t.equal(r.server, 'https://10.0.0.2:6443', file);
    t.same(r.opts.headers, { Accept: 'application/json', Authorization: 'Bearer abc' }, file);
  }
  writeFileSync(join(dir, 'broken'), '{"apiVersion": "v1",\n  "clusters": [\n');
  t.throws(() => kubeconfigCredentials(join(dir, 'broken'), ''), /line|col|Flow|flow/i, 'broken JSON: the YAML parser says where');
});

t.test("a context named (a Corefile's `kubeconfig FILE CONTEXT`) instead of the current one", async (t) => {
  const path = kubeconfig('token: abc');
  t.equal(kubeconfigCredentials(path, '', 'other')?.identity, 'anonymous (no credentials)', "the named context's user (one the file does not define)");
  t.match(kubeconfigCredentials(path, '')?.identity, /kubeconfig user "u"/, 'the current one unsaid');
  t.throws(() => kubeconfigCredentials(path, '', 'missing'), { message: 'no context "missing"' });
});

t.test('exec and auth-provider users are left to client-node; broken files say why', async (t) => {
  t.equal(kubeconfigCredentials(kubeconfig('exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}'), ''), null);
  t.equal(kubeconfigCredentials(kubeconfig('auth-provider: {name: oidc}'), ''), null);
  const noServer = kubeconfig('token: x', 'certificate-authority: ca.crt');
  t.throws(() => kubeconfigCredentials(noServer, ''), /no server/);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-kubeconfig-'));
  writeFileSync(join(dir, 'config'), 'current-context: nope\ncontexts: []\n');
  t.throws(() => kubeconfigCredentials(join(dir, 'config'), ''), /no current context/);
});

t.test('in-cluster: service host and port, the mounted CA and token', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-sa-'));
  writeFileSync(join(dir, 'ca.crt'), 'SA CA');
  writeFileSync(join(dir, 'token'), 'sa-token');
  const c = inClusterCredentials({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir);
  t.equal(c.server, 'https://[fd00::1]:443');
  const opts: RequestOptions = {};
  c.apply(opts);
  t.same(opts.headers, { Authorization: 'Bearer sa-token' });
  t.equal(String(opts.ca), 'SA CA');
});
