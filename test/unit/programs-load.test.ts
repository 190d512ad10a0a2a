// What loading a program's code costs before it serves anything: Node's bundled undici (fetch,
// WebSocket) is ~13 MiB of RSS and 2.3 MB of heap, and none of our programs uses it; TLS (node:https)
// ~5 MiB, which only kube-dns's API client needs, once it connects. An ESM import of node:http builds
// the module's namespace by reading every export, and http.WebSocket's lazy getter then loads undici
// (bench:footprint: node-cache at rest 77.8 MiB against bare Node's 45.3). Each program's module is
// loaded in a child Node, as its cmd/ main loads it, and what Node loaded is read.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const PROGRAMS = ['pkg/kubedns/program.ts', 'pkg/nodecache/program.ts', 'pkg/dnscache/program.ts', 'pkg/nanny/nanny.ts', 'pkg/sidecar/program.ts'];

for (const path of PROGRAMS) {
  t.test(`${path}: loaded without Node's undici or TLS`, async (t) => {
    const module = fileURLToPath(new URL(`../../${path}`, import.meta.url));
    const script = `await import(${JSON.stringify(module)}); process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => /undici|\\btls\\b/.test(m))));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    t.equal(r.status, 0, r.stderr);
    t.same(JSON.parse(r.stdout), [], 'no undici or TLS module loaded');
  });
}
