// The Dockerfiles, checked statically because no container engine runs where this project is tested
// (manifests/README.md says so): what each COPY takes exists (in the context, or made by an earlier stage),
// the runtime stage has production dependencies only, runs as a numeric non-root user (node-cache: root,
// for its interface and netfilter rules), and its ENTRYPOINT runs one bin of package.json with the Node
// flags of that bin's shebang.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import t from 'tap';
import { repoRoot } from '../helpers/process.ts';
import { only, readManifest } from '../e2e/harness/manifests.ts';

interface Instruction {
  op: string;
  args: string;
}

interface Stage {
  name: string;
  /** The FROM image after ARG defaults, or the name of an earlier stage. */
  base: string;
  instructions: Instruction[];
}

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const tsconfig = JSON.parse(readFileSync(join(repoRoot, 'tsconfig.json'), 'utf8'));
const deployment = only(readManifest('kube-dns.yaml'), 'Deployment', 'kube-dns');
const nodeLocalDns = only(readManifest('optional/node-local-dns.yaml'), 'DaemonSet', 'node-local-dns');
// The distroless nodejs images' node (their own ENTRYPOINT is ["/nodejs/bin/node"]).
const DISTROLESS_NODE = '/nodejs/bin/node';

interface ImageSpec {
  bin: string;
  /** The programs it runs: its ENTRYPOINT's bin, and the nanny's default child. */
  programs: string[];
  runtime: RegExp;
  /** The node its ENTRYPOINT runs. */
  node: string;
  /** Where the manifests run it: its pod template. */
  workload: any;
}

const DISTROLESS = { runtime: /^gcr\.io\/distroless\/nodejs24-debian12:nonroot$/, node: DISTROLESS_NODE, workload: deployment };
const IMAGES: Record<string, ImageSpec> = {
  'Dockerfile.kubedns': { bin: 'kube-dns', programs: ['kube-dns'], ...DISTROLESS },
  'Dockerfile.nanny': { bin: 'dnsmasq-nanny', programs: ['dnsmasq-nanny', 'dnscache'], ...DISTROLESS },
  'Dockerfile.sidecar': { bin: 'sidecar', programs: ['sidecar'], ...DISTROLESS },
  // ip, iptables and nft beside node: Debian with the official image's Node (at /usr/local/bin/node).
  'Dockerfile.node-cache': { bin: 'node-cache', programs: ['node-cache'], runtime: /^node:24-bookworm-slim$/, node: '/usr/local/bin/node', workload: nodeLocalDns },
};

/** Instructions with continuations joined and comments dropped; the header comment kept aside. */
function parseDockerfile(text: string): { stages: Stage[]; header: string } {
  const lines = text.split('\n');
  const header = lines.filter((l) => l.startsWith('#')).join('\n');
  const logical: string[] = [];
  let current = '';
  for (const raw of lines) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.trimEnd();
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') logical.push(current.trim());
    current = '';
  }
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const l of logical) {
    const [, op, rest] = /^(\S+)\s*(.*)$/.exec(l)!;
    const upper = op.toUpperCase();
    if (upper === 'ARG' && stages.length === 0) {
      const [k, v = ''] = rest.split('=');
      args.set(k, v);
    } else if (upper === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest)!;
      const base = m[1].replace(/\$\{(\w+)\}/g, (_, k: string) => args.get(k) ?? '');
      stages.push({ name: m[2] ?? String(stages.length), base, instructions: [] });
    } else {
      stages.at(-1)!.instructions.push({ op: upper, args: rest });
    }
  }
  return { stages, header };
}

/** .dockerignore as the builder reads it: path patterns from the context root, `*` within one segment. */
function dockerignored(path: string): boolean {
  const patterns = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  return patterns.some((p) => {
    const re = new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}(/.*)?$`);
    return re.test(path);
  });
}

/** Every file under a context path (the path itself when it is a file). */
function contextFiles(path: string): string[] {
  const abs = join(repoRoot, path);
  if (!statSync(abs).isDirectory()) return [path];
  return readdirSync(abs).flatMap((n) => contextFiles(posix.join(path, n)));
}

function workdirAt(stage: Stage, index: number, inherited: string): string {
  let wd = inherited;
  for (const ins of stage.instructions.slice(0, index)) if (ins.op === 'WORKDIR') wd = posix.resolve(wd, ins.args);
  return wd;
}

/** `COPY [--from=x] src... dest` → its parts; targets: where each source lands, resolved against WORKDIR. */
function copyParts(ins: Instruction, wd: string): { from?: string; sources: string[]; targets: string[] } {
  const words = ins.args.split(/\s+/);
  const from = words[0].startsWith('--from=') ? words.shift()!.slice('--from='.length) : undefined;
  const destText = words.pop()!;
  const dest = posix.resolve(wd, destText);
  // A destination ending in / (or several sources) is a directory the sources go into.
  const intoDir = destText.endsWith('/') || words.length > 1;
  return { from, sources: words, targets: words.map((s) => (intoDir ? posix.join(dest, posix.basename(s)) : dest)) };
}

/** The absolute paths a stage holds that later stages may copy: what it copied in and what its RUNs made. */
function stageOutputs(stage: Stage, byName: Map<string, Stage>): string[] {
  const out: string[] = [];
  const parent = byName.get(stage.base);
  if (parent) out.push(...stageOutputs(parent, byName));
  if (stage.base.startsWith('gcr.io/distroless/nodejs')) out.push(DISTROLESS_NODE);
  stage.instructions.forEach((ins, i) => {
    const wd = workdirAt(stage, i, '/');
    if (ins.op === 'COPY') out.push(...copyParts(ins, wd).targets);
    if (ins.op === 'RUN' && /\bnpm ci\b/.test(ins.args)) out.push(posix.join(wd, 'node_modules'));
    if (ins.op === 'RUN' && /\bnpm run build\b/.test(ins.args)) out.push(posix.join(wd, tsconfig.compilerOptions.outDir));
  });
  return out;
}

const produced = (path: string, outputs: string[]) => outputs.some((o) => path === o || path.startsWith(`${o}/`));

/** The Node flags on a bin's source shebang: `#!/usr/bin/env -S node <flags>`. */
function shebangFlags(bin: string): string[] {
  const src = pkg.bin[bin].replace(new RegExp(`^${tsconfig.compilerOptions.outDir}/`), '').replace(/\.js$/, '.ts');
  const first = readFileSync(join(repoRoot, src), 'utf8').split('\n')[0];
  const m = /^#!\/usr\/bin\/env -S node\s*(.*)$/.exec(first);
  if (!m) throw new Error(`${src}: no node shebang`);
  return m[1].split(/\s+/).filter(Boolean);
}

t.test('.dockerignore keeps the rebuilt and irrelevant trees out of the context', async (t) => {
  for (const p of ['node_modules', 'dist', '.git', 'bench/results', 'test', 'node_modules/yaml/package.json', 'test/unit/x.test.ts']) t.ok(dockerignored(p), `${p} is excluded`);
  for (const p of ['package.json', 'package-lock.json', 'tsconfig.json', 'cmd/kube-dns/main.ts', 'pkg/dns/codec.ts', 'bench/run.ts']) t.notOk(dockerignored(p), `${p} is in the context`);
});

// Static and dynamic imports and re-exports of a module, with the specifier.
const IMPORT = /(?:^(?:import(?!\s+type\b)|export(?!\s+type\b))[^'"]*?from\s*|\bimport\(\s*)['"]([^'"]+)['"]/gm;
const packageName = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

/** The npm packages a program may load: its entry's imports, followed through our own files. */
function reachablePackages(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(join(repoRoot, file), 'utf8').matchAll(IMPORT)) {
      const spec = m[1];
      if (spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) visit(posix.normalize(posix.join(posix.dirname(file), spec)));
      else packages.add(packageName(spec));
    }
  };
  visit(entry);
  return packages;
}

t.test('every bin has its image', async (t) => {
  t.same(Object.values(IMAGES).flatMap((i) => i.programs).sort(), Object.keys(pkg.bin).sort());
});

t.test('the programs import nothing at run time that --omit=dev leaves out', async (t) => {
  const packages = new Set(Object.values(IMAGES).flatMap((i) => i.programs).flatMap((p) => [...reachablePackages(`cmd/${p}/main.ts`)]));
  t.ok(packages.size > 0, `found run-time imports: ${[...packages].join(', ')}`);
  for (const p of packages) t.ok(p in pkg.dependencies, `${p} is a production dependency`);
});

for (const [file, spec] of Object.entries(IMAGES)) {
  const { bin } = spec;
  t.test(file, async (t) => {
    const { stages, header } = parseDockerfile(readFileSync(join(repoRoot, file), 'utf8'));
    const byName = new Map(stages.map((s) => [s.name, s]));
    const runtime = stages.at(-1)!;
    const runtimeBase = (function root(s: Stage): string {
      const parent = byName.get(s.base);
      return parent ? root(parent) : s.base;
    })(runtime);

    t.test('stages: a Node 24 build, a Node 24 runtime', async (t) => {
      const build = stages.find((s) => s.instructions.some((i) => i.op === 'RUN' && /\bnpm run build\b/.test(i.args)));
      t.ok(build, 'a stage runs npm run build');
      t.match(build!.base, /^node:24(-|$)/, 'on Node 24');
      t.ok(build!.instructions.some((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args)), 'after npm ci');
      t.match(runtimeBase, spec.runtime, `runtime: ${spec.runtime.source}`);
    });

    t.test('every COPY takes something that exists', async (t) => {
      stages.forEach((stage, si) => {
        stage.instructions.forEach((ins, i) => {
          if (ins.op !== 'COPY' && ins.op !== 'ADD') return;
          t.equal(ins.op, 'COPY', 'COPY, not ADD');
          const c = copyParts(ins, workdirAt(stage, i, '/'));
          if (c.from === undefined) {
            for (const s of c.sources) {
              t.ok(existsSync(join(repoRoot, s)), `${stage.name}: ${s} exists in the repository`);
              t.same(contextFiles(s).filter(dockerignored), [], `${stage.name}: .dockerignore lets ${s} in`);
            }
            return;
          }
          const from = byName.get(c.from);
          t.ok(from && stages.indexOf(from) < si, `${stage.name}: --from=${c.from} is an earlier stage`);
          const outputs = stageOutputs(from!, byName);
          for (const s of c.sources) t.ok(produced(s, outputs), `${stage.name}: ${s} is made by stage ${c.from} (${outputs.join(', ')})`);
        });
      });
    });

    t.test('packages taken out of node_modules are not imported by the programs the image runs', async (t) => {
      const uninstalled = (args: string): string[] =>
        [...args.matchAll(/\bnpm uninstall\b([^&;|]*)/g)].flatMap((m) => m[1].trim().split(/\s+/).filter((w) => w !== '' && !w.startsWith('-')));
      const removed = stages.flatMap((s) => s.instructions).flatMap((i) => (i.op === 'RUN' ? uninstalled(i.args) : []));
      const programs = spec.programs;
      const needed = new Set(programs.flatMap((p) => [...reachablePackages(`cmd/${p}/main.ts`)]));
      for (const r of removed) t.notOk(needed.has(r), `${r} is removed, and nothing ${programs.join(' or ')} imports reaches it`);
      if (!needed.has('@kubernetes/client-node')) t.ok(removed.includes('@kubernetes/client-node'), 'client-node, which only kube-dns loads, is left out');
    });

    t.test('the runtime stage: dist, production node_modules, package.json, nothing else', async (t) => {
      const wd = workdirAt(runtime, runtime.instructions.length, '/');
      const copies = runtime.instructions.map((ins, i) => (ins.op === 'COPY' ? copyParts(ins, workdirAt(runtime, i, '/')) : null)).filter((c) => c !== null);
      const into = (target: string) => copies.find((c) => c.targets.includes(target));
      const modules = into(posix.join(wd, 'node_modules'));
      t.ok(modules?.from, 'node_modules comes from a stage');
      const depsStage = byName.get(modules!.from!)!;
      t.ok(depsStage.instructions.some((i) => i.op === 'RUN' && /\bnpm ci\b.*--omit=dev/.test(i.args)), `stage ${modules!.from} installs with --omit=dev`);
      t.ok(depsStage.instructions.every((i) => i.op !== 'RUN' || !/\bnpm (ci|install)\b(?!.*--omit=dev)/.test(i.args)), `stage ${modules!.from} installs nothing else`);
      const dist = into(posix.join(wd, tsconfig.compilerOptions.outDir));
      t.ok(dist?.from && byName.get(dist.from)!.instructions.some((i) => /\bnpm run build\b/.test(i.args)), 'dist/ comes from the build');
      t.same(into(posix.join(wd, 'package.json'))?.sources, ['package.json'], 'package.json (type: module) from the context');
      const others = copies.filter((c) => !c.targets.includes(DISTROLESS_NODE) && ![modules, dist, into(posix.join(wd, 'package.json'))].includes(c));
      t.same(others, [], 'no other files');
    });

    t.test('USER: numeric; non-root, but for node-cache', async (t) => {
      const user = runtime.instructions.filter((i) => i.op === 'USER').at(-1);
      t.ok(user, 'the runtime stage sets USER');
      const [uid, gid] = user!.args.split(':');
      t.match(uid, /^\d+$/, 'numeric uid (the kubelet can verify runAsNonRoot)');
      if (bin === 'node-cache') {
        t.same([uid, gid], ['0', '0'], 'root, as the original: it sets up an interface and netfilter rules');
        t.same(spec.workload.spec.template.spec.containers[0].securityContext.capabilities.add, ['NET_ADMIN'], 'with NET_ADMIN added, nothing else');
        return;
      }
      t.ok(Number(uid) > 0 && Number(gid ?? uid) > 0, `uid ${uid} and gid ${gid} are not root`);
      t.equal(Number(uid), spec.workload.spec.template.spec.securityContext.runAsUser, 'the uid the Deployment states');
    });

    t.test(`ENTRYPOINT: node with the shebang's flags on bin ${bin}`, async (t) => {
      const entry = runtime.instructions.filter((i) => i.op === 'ENTRYPOINT').at(-1);
      t.ok(entry, 'an ENTRYPOINT');
      const argv: string[] = JSON.parse(entry!.args);
      t.ok(Array.isArray(argv), 'exec form (no shell in the image)');
      t.equal(argv[0], spec.node, 'the runtime image\'s node');
      t.same(argv.slice(1, -1), shebangFlags(bin), 'the flags of the bin\'s shebang');
      const wd = workdirAt(runtime, runtime.instructions.length, '/');
      t.equal(argv.at(-1), posix.join(wd, pkg.bin[bin]), `the script is package.json's bin ${bin}`);
      const src = pkg.bin[bin].replace(/^dist\//, '').replace(/\.js$/, '.ts');
      t.ok(existsSync(join(repoRoot, src)), `${src} exists`);
      t.equal(tsconfig.compilerOptions.outDir, 'dist', 'tsc writes dist/');
      t.ok(tsconfig.include.includes('cmd/**/*.ts') && tsconfig.include.includes('pkg/**/*.ts'), 'tsc compiles cmd/ and pkg/');
    });

    t.test('the header\'s build tag is the Deployment\'s image for this bin', async (t) => {
      const tag = / -t (\S+) \./.exec(header)?.[1];
      t.ok(tag, 'the header says how to build');
      const images = spec.workload.spec.template.spec.containers.map((c: any) => c.image);
      t.ok(images.includes(tag), `${tag} is an image of the ${spec.workload.kind}`);
      t.equal(tag!.split('/').pop()!.split(':')[0], bin, 'named after the bin');
    });

    if (bin === 'dnsmasq-nanny' || bin === 'kube-dns') {
      t.test('the node binary the entrypoint runs carries cap_net_bind_service (dnscache, and kube-dns given -conf, bind port 53)', async (t) => {
        const copyNode = runtime.instructions.map((ins, i) => (ins.op === 'COPY' ? copyParts(ins, workdirAt(runtime, i, '/')) : null)).find((c) => c?.targets.includes(DISTROLESS_NODE));
        t.ok(copyNode?.from, 'the entrypoint\'s node is replaced from a stage');
        const capStage = byName.get(copyNode!.from!)!;
        const [source] = copyNode!.sources;
        t.ok(capStage.instructions.some((i) => i.op === 'RUN' && i.args.includes(`setcap cap_net_bind_service=+ep ${source}`)), `stage ${capStage.name} runs setcap on ${source}`);
        t.ok(capStage.instructions.some((i) => i.op === 'COPY' && copyParts(i, '/').targets.includes(source) && copyParts(i, '/').from === runtime.base), 'and that file is the runtime image\'s own node');
        t.ok(existsSync(join(repoRoot, 'cmd/dnscache/main.ts')), 'dnscache is compiled into the same dist/');
      });
    }
  });
}
