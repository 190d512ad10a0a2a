// What loading a program's code costs before it serves anything. An ESM import of a Node builtin
// builds the module's namespace by reading every export, and the lazy ones then load what they stand
// for: http.WebSocket Node's undici (~13 MiB of RSS), fs.promises, util.diff, crypto.webcrypto and
// more (~3 MiB together). Our code takes node:fs, node:util, node:net, node:crypto and node:http from
// process.getBuiltinModule instead (pkg/httpserver/README.md); TLS (node:https, ~5 MiB) only kube-dns's
// API client loads, once it connects (bench:footprint: node-cache at rest 77.8 → 67.6 MiB; bare Node
// 45.4). Each program's module is loaded in a child Node, as its cmd/ main loads it, and what Node
// loaded is read: none of the modules only those getters load.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Test } from 'tap';

const PROGRAMS = ['pkg/kubedns/program.ts', 'pkg/nodecache/program.ts', 'pkg/dnscache/program.ts', 'pkg/nanny/nanny.ts', 'pkg/sidecar/program.ts'];
/** Modules that only those lazy exports load (undici, TLS, fs.promises and streams, util.diff, webcrypto...). */
const LAZY = /undici|\btls\b|internal\/fs\/(promises|streams|dir)|internal\/util\/diff|internal\/crypto\/webcrypto/;

/**
 * What Node has loaded once `code` ran in a child Node (ESM): its builtins by default, or what `list`
 * (an expression) names, e.g. the CommonJS modules (npm packages) in require's cache.
 */
function loadedBy(t: Test, code: string, list = 'process.moduleLoadList'): string[] {
  // Through env -u: tap hands every Node it sees spawned its own loaders in NODE_OPTIONS, and they load some of these.
  const r = spawnSync('env', ['-u', 'NODE_OPTIONS', process.execPath, '--input-type=module', '-e', `${code}; process.stdout.write(JSON.stringify(${list}));`], { encoding: 'utf8', timeout: 30_000 });
  t.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as string[];
}

for (const path of PROGRAMS) {
  t.test(`${path}: loaded without what builtins' lazy exports load`, async (t) => {
    const module = fileURLToPath(new URL(`../../${path}`, import.meta.url));
    // What a child loads before any code of ours.
    const before = new Set(loadedBy(t, 'await 0'));
    const added = loadedBy(t, `await import(${JSON.stringify(module)})`).filter((m) => !before.has(m) && LAZY.test(m));
    t.same(added, [], 'none of them loaded');
  });
}

t.test('kube-dns on the Kubernetes API: the YAML parser is loaded only to read a kubeconfig', async (t) => {
  // In a cluster kube-dns reads its service account, not a kubeconfig: yaml would be ~20 ms of its
  // start and ~2 MiB at rest for nothing.
  const path = (p: string) => JSON.stringify(fileURLToPath(new URL(`../../${p}`, import.meta.url)));
  const program = ['pkg/kubedns/program.ts', 'pkg/source/kubernetes.ts'].map((p) => `await import(${path(p)});`).join(' ');
  const yamlAfter = (code: string) => loadedBy(t, `${program} ${code}`, "Object.keys((await import('node:module')).Module._cache)").filter((m) => m.includes('/node_modules/yaml/'));
  t.same(yamlAfter(''), [], 'not loaded with the program and the API source');
  const dir = t.testdir({ kubeconfig: 'apiVersion: v1\nclusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]\nusers: [{name: u, user: {token: abc}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n' });
  const read = `(await import(${path('pkg/source/kubernetes-credentials.ts')})).kubeconfigCredentials(${JSON.stringify(`${dir}/kubeconfig`)}, '');`;
  t.ok(yamlAfter(read).length > 0, 'loaded once a kubeconfig is read');
  const json = t.testdir({ kubeconfig: JSON.stringify({ apiVersion: 'v1', clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443' } }], users: [{ name: 'u', user: { token: 'abc' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }) });
  const readJson = `const c = (await import(${path('pkg/source/kubernetes-credentials.ts')})).kubeconfigCredentials(${JSON.stringify(`${json}/kubeconfig`)}, ''); if (c.server !== 'https://10.0.0.1:6443') throw new Error(c.server);`;
  t.same(yamlAfter(readJson), [], 'not for a kubeconfig in JSON');
});
