// @kubernetes/client-node as one file, for the images (the Dockerfile's `build` stage): installed, it
// is ~67 MB in 5,000 files (generated API classes, their .d.ts and source maps) of which kube-dns
// loads one class (KubeConfig, for exec and auth-provider kubeconfig users); that class bundled with
// what it imports is ~2.8 MB. Writes <out>/package.json and <out>/index.js: a package the programs'
// unchanged `import('@kubernetes/client-node')` resolves when <out> is
// node_modules/@kubernetes/client-node. It exports USED alone (test/unit/dockerfiles-build.test.ts
// checks that pkg/ imports nothing else of it).
//
//   node build/bundle-client-node.ts <out>

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const PACKAGE = '@kubernetes/client-node';
/** What pkg/ imports of it; the rest (the generated API) stays out of the bundle. */
export const USED = ['KubeConfig'];

/** Writes the bundle into `out`; resolves with client-node's version. */
export async function bundle(out: string): Promise<string> {
  const { build } = await import('esbuild');
  const require = createRequire(import.meta.url);
  const { version } = JSON.parse(readFileSync(require.resolve(`${PACKAGE}/package.json`), 'utf8')) as { version: string };
  mkdirSync(out, { recursive: true });
  await build({
    stdin: { contents: `export { ${USED.join(', ')} } from '${PACKAGE}';`, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    outfile: join(out, 'index.js'),
    legalComments: 'eof',
    logLevel: 'warning',
    // Its CommonJS dependencies call require() for Node's builtins, which an ES module lacks.
    banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
  });
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ name: PACKAGE, version, type: 'module', exports: './index.js' }, null, 2)}\n`);
  return version;
}

if (import.meta.main) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node build/bundle-client-node.ts <out>');
    process.exit(2);
  }
  const version = await bundle(out);
  console.log(`${PACKAGE} ${version} (${USED.join(', ')}) bundled into ${out}`);
}
