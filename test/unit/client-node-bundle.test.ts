// The images' @kubernetes/client-node (build/bundle-client-node.ts): one file that a program's
// unchanged import('@kubernetes/client-node') loads, exporting what our code uses, and doing what
// kube-dns loads it for: running a kubeconfig's exec user and putting its token on the request.

import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundle, PACKAGE, USED } from '../../build/bundle-client-node.ts';
import { EXEC_TOKEN, execUserProbe, probeResult } from '../helpers/client-node-probe.ts';

const run = promisify(execFile);

t.test('the bundle loads as the package, exports what we use, and runs an exec user', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'node_modules', PACKAGE);
  await bundle(out);
  t.same(readdirSync(out).sort(), ['index.js', 'package.json'], 'one file and its package.json');
  t.ok(statSync(join(out, 'index.js')).size < 5_000_000, `index.js: ${statSync(join(out, 'index.js')).size} bytes (installed, the package is ~67 MB)`);

  writeFileSync(join(dir, 'probe.mjs'), execUserProbe());
  const { stdout } = await run(process.execPath, [join(dir, 'probe.mjs')], { cwd: dir, timeout: 30_000 });
  const got = probeResult(stdout);
  t.same(got.exports.sort(), [...USED].sort(), 'exports exactly what pkg/ imports');
  t.equal(got.authorization, `Bearer ${EXEC_TOKEN}`, "the exec plugin's token on the request");
});
