// The Dockerfile, checked statically (test/cluster/images.test.ts runs what it builds): what each COPY
// takes exists (in the context, or made by an earlier stage); every program's target stands on one
// root (the distroless runtime's, its node with the file capability, node-cache's tools) and the same
// layers, adding only its configuration; the images hold production dependencies only, with
// @kubernetes/client-node bundled; each runs as a numeric non-root user (node-cache: root, for its
// interface and netfilter rules), and its ENTRYPOINT runs one bin of package.json with the Node flags
// of that bin's shebang.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import t from 'tap';
import { repoRoot } from '../helpers/process.ts';
import { only, readManifest } from '../e2e/harness/manifests.ts';
import { PACKAGE as CLIENT_NODE, USED as CLIENT_NODE_USED } from '../../build/bundle-client-node.ts';

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
const RUNTIME = /^gcr\.io\/distroless\/nodejs24-debian12:nonroot$/;

interface Target {
  bin: string;
  /** The programs it runs: its ENTRYPOINT's bin, and the nanny's default child. */
  programs: string[];
  /** Where the manifests run it (its pod template), if they do. */
  workload?: any;
}

const TARGETS: Record<string, Target> = {
  'kube-dns': { bin: 'kube-dns', programs: ['kube-dns'], workload: deployment },
  'dnsmasq-nanny': { bin: 'dnsmasq-nanny', programs: ['dnsmasq-nanny', 'dnscache'], workload: deployment },
  dnscache: { bin: 'dnscache', programs: ['dnscache'] },
  sidecar: { bin: 'sidecar', programs: ['sidecar'], workload: deployment },
  'node-cache': { bin: 'node-cache', programs: ['node-cache'], workload: nodeLocalDns },
};
/** What a program's target may add to the shared stage: configuration, no layer. */
const CONFIG_ONLY = new Set(['ENTRYPOINT', 'CMD', 'EXPOSE', 'USER', 'LABEL', 'ENV']);

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
  // A source ending in / is a directory whose contents land in dest.
  return { from, sources: words, targets: words.map((s) => (intoDir && !s.endsWith('/') ? posix.join(dest, posix.basename(s)) : dest)) };
}

/** The absolute paths a stage holds that later stages may copy: what it copied in and what its RUNs made ('/': an image's whole root). */
function stageOutputs(stage: Stage, byName: Map<string, Stage>): string[] {
  const out: string[] = [];
  const parent = byName.get(stage.base);
  if (parent) out.push(...stageOutputs(parent, byName));
  else if (stage.base !== 'scratch') out.push('/');
  stage.instructions.forEach((ins, i) => {
    const wd = workdirAt(stage, i, '/');
    if (ins.op === 'COPY') out.push(...copyParts(ins, wd).targets);
    if (ins.op !== 'RUN') return;
    if (/\bnpm ci\b/.test(ins.args)) out.push(posix.join(wd, 'node_modules'));
    if (/\bnpm run build\b/.test(ins.args)) out.push(posix.join(wd, tsconfig.compilerOptions.outDir));
    const bundle = /\bnode build\/bundle-client-node\.ts (\S+)/.exec(ins.args);
    if (bundle) out.push(posix.resolve(wd, bundle[1]));
  });
  return out;
}

const trimmed = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);
const produced = (path: string, outputs: string[]) =>
  outputs.map(trimmed).some((o) => o === '/' || trimmed(path) === o || path.startsWith(`${o}/`));

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
  for (const p of ['package.json', 'package-lock.json', 'tsconfig.json', 'build/bundle-client-node.ts', 'cmd/kube-dns/main.ts', 'pkg/dns/codec.ts', 'bench/run.ts']) t.notOk(dockerignored(p), `${p} is in the context`);
});

// Static and dynamic imports and re-exports of a module, with the specifier.
const IMPORT = /(?:^(?:import(?!\s+type\b)|export(?!\s+type\b))[^'"]*?from\s*|\bimport\(\s*)['"]([^'"]+)['"]/gm;
const packageName = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

/** Our files a program may load: its entry, followed through their relative imports. */
function reachableFiles(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(join(repoRoot, file), 'utf8').matchAll(IMPORT)) {
      if (m[1].startsWith('.')) visit(posix.normalize(posix.join(posix.dirname(file), m[1])));
    }
  };
  visit(entry);
  return seen;
}

/** The npm packages a program may load. */
function reachablePackages(entry: string): Set<string> {
  const specs = [...reachableFiles(entry)].flatMap((f) => [...readFileSync(join(repoRoot, f), 'utf8').matchAll(IMPORT)].map((m) => m[1]));
  return new Set(specs.filter((s) => !s.startsWith('node:') && !s.startsWith('.')).map(packageName));
}

/** The executables a program runs by name (execFile or a promisified `run` of it): 'ip', 'nft', ... */
function executablesRun(entry: string): Set<string> {
  const names = new Set<string>();
  for (const f of reachableFiles(entry)) {
    for (const call of readFileSync(join(repoRoot, f), 'utf8').matchAll(/\b(?:run|execFile)\(([^,()]+),/g)) {
      for (const word of call[1].matchAll(/'([\w-]+)'/g)) names.add(word[1]);
    }
  }
  return names;
}

const dockerfile = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
const stages = dockerfile.stages;
const byName = new Map(stages.map((s) => [s.name, s]));
const stage = (name: string): Stage => byName.get(name)!;
/** The stage a stage stands on, through FROM <stage>, down to an image. */
const ancestry = (s: Stage): Stage[] => [s, ...(byName.has(s.base) ? ancestry(stage(s.base)) : [])];
const copiesOf = (s: Stage) => s.instructions.map((ins, i) => (ins.op === 'COPY' ? copyParts(ins, workdirAt(s, i, '/')) : null)).filter((c) => c !== null);
const runs = (s: Stage) => s.instructions.filter((i) => i.op === 'RUN').map((i) => i.args);

t.test('every bin has its target', async (t) => {
  t.same(Object.values(TARGETS).map((i) => i.bin).sort(), Object.keys(pkg.bin).sort());
  for (const target of Object.keys(TARGETS)) t.ok(byName.has(target), `stage ${target}`);
});

t.test('the programs import nothing at run time that --omit=dev leaves out', async (t) => {
  const packages = new Set(Object.values(TARGETS).flatMap((i) => i.programs).flatMap((p) => [...reachablePackages(`cmd/${p}/main.ts`)]));
  t.ok(packages.size > 0, `found run-time imports: ${[...packages].join(', ')}`);
  for (const p of packages) t.ok(p in pkg.dependencies, `${p} is a production dependency`);
});

t.test('a Node 24 build stage compiles dist/ after npm ci', async (t) => {
  const build = stages.find((s) => runs(s).some((r) => /\bnpm run build\b/.test(r)));
  t.ok(build, 'a stage runs npm run build');
  t.match(build!.base, /^node:24(-|$)/, 'on Node 24');
  t.ok(runs(build!).some((r) => /\bnpm ci\b/.test(r)), 'after npm ci');
});

t.test('every COPY takes something that exists', async (t) => {
  stages.forEach((s, si) => {
    s.instructions.forEach((ins, i) => {
      if (ins.op !== 'COPY' && ins.op !== 'ADD') return;
      t.equal(ins.op, 'COPY', 'COPY, not ADD');
      const c = copyParts(ins, workdirAt(s, i, '/'));
      if (c.from === undefined) {
        for (const src of c.sources) {
          t.ok(existsSync(join(repoRoot, src)), `${s.name}: ${src} exists in the repository`);
          t.same(contextFiles(src).filter(dockerignored), [], `${s.name}: .dockerignore lets ${src} in`);
        }
        return;
      }
      const from = byName.get(c.from);
      t.ok(from && stages.indexOf(from) < si, `${s.name}: --from=${c.from} is an earlier stage`);
      const outputs = stageOutputs(from!, byName);
      for (const src of c.sources) t.ok(produced(src, outputs), `${s.name}: ${src} is made by stage ${c.from} (${outputs.join(', ')})`);
    });
  });
});

// The stage every target stands on: what the images hold.
const programs = stage(stage('kube-dns').base);

t.test("the targets' one root: the distroless runtime's, Node once, node-cache's tools in it", async (t) => {
  t.equal(programs.base, 'scratch', `${programs.name} starts empty, so the runtime's own node is not a layer beneath a changed one`);
  const [rootCopy] = copiesOf(programs);
  t.same(rootCopy?.targets.map(trimmed), ['/'], 'its first COPY is its root');
  const root = stage(rootCopy!.from!);
  const rootfs = trimmed(rootCopy!.sources[0]);
  const runtimeCopy = copiesOf(root).find((c) => c.targets.map(trimmed).includes(rootfs));
  t.ok(runtimeCopy?.from, `stage ${root.name} fills ${rootfs} from a stage`);
  t.same(runtimeCopy!.sources, ['/'], "that stage's whole root");
  t.match(stage(runtimeCopy!.from!).base, RUNTIME, `which is ${RUNTIME.source}`);
  t.ok(runs(root).some((r) => r.includes(`setcap cap_net_bind_service=+ep ${rootfs}${DISTROLESS_NODE}`)), 'its node gets cap_net_bind_service (dnscache, and kube-dns given -conf, bind port 53 as non-root)');
  const tools = [...executablesRun('cmd/node-cache/main.ts')];
  const probes = nodeLocalDns.spec.template.spec.containers.flatMap((c: any) => [c.readinessProbe, c.livenessProbe]).filter((p: any) => p?.exec).map((p: any) => p.exec.command[0]);
  t.ok(tools.length > 0, `node-cache runs ${tools.join(', ')}`);
  for (const tool of [...tools, ...probes]) t.ok(runs(root).some((r) => r.includes(`chroot ${rootfs} ${tool} `)), `${tool} is run in the finished root while it is built (a missing library fails the build)`);
});

t.test('what the programs stage adds: production node_modules with client-node bundled, dist, package.json', async (t) => {
  const wd = workdirAt(programs, programs.instructions.length, '/');
  const copies = copiesOf(programs).slice(1);
  const into = (target: string) => copies.find((c) => c.targets.includes(target));
  const modules = into(posix.join(wd, 'node_modules'));
  t.ok(modules?.from, 'node_modules comes from a stage');
  const deps = stage(modules!.from!);
  t.ok(runs(deps).some((r) => /\bnpm ci\b.*--omit=dev/.test(r)), `stage ${deps.name} installs with --omit=dev`);
  t.ok(runs(deps).every((r) => !/\bnpm (ci|install)\b(?!.*--omit=dev)/.test(r)), `stage ${deps.name} installs nothing else`);
  t.ok(runs(deps).some((r) => new RegExp(`\\bnpm uninstall\\b.*${CLIENT_NODE}`).test(r)), `${CLIENT_NODE} (~86 MB with what only it needs) is uninstalled`);
  const bundle = copiesOf(deps).find((c) => c.targets.includes(posix.join(workdirAt(deps, deps.instructions.length, '/'), 'node_modules', CLIENT_NODE)));
  t.ok(bundle?.from && runs(stage(bundle.from)).some((r) => r.includes(`node build/bundle-client-node.ts ${bundle.sources[0]}`)), 'and its bundle put in its place');
  const dist = into(posix.join(wd, tsconfig.compilerOptions.outDir));
  t.ok(dist?.from && runs(stage(dist.from)).some((r) => /\bnpm run build\b/.test(r)), 'dist/ comes from the build');
  t.same(into(posix.join(wd, 'package.json'))?.sources, ['package.json'], 'package.json (type: module) from the context');
  t.same(copies.filter((c) => ![modules, dist, into(posix.join(wd, 'package.json'))].includes(c)), [], 'no other files');
});

t.test('the bundle exports every name the programs import from client-node', async (t) => {
  const imported = new Set<string>();
  for (const p of Object.values(TARGETS).flatMap((i) => i.programs)) {
    for (const f of reachableFiles(`cmd/${p}/main.ts`)) {
      const text = readFileSync(join(repoRoot, f), 'utf8');
      for (const m of text.matchAll(new RegExp(`(?:^import(?!\\s+type\\b)|\\bconst)\\s*\\{([^}]*)\\}\\s*(?:from|=\\s*await\\s+import\\()\\s*'${CLIENT_NODE}'`, 'gm'))) {
        for (const name of m[1].split(',')) if (name.trim() !== '' && !name.trim().startsWith('type ')) imported.add(name.trim().split(/\s+as\s+|:/)[0].trim());
      }
    }
  }
  t.ok(imported.size > 0, `imported: ${[...imported].join(', ')}`);
  for (const name of imported) t.ok(CLIENT_NODE_USED.includes(name), `${name} is in the bundle`);
});

for (const [target, spec] of Object.entries(TARGETS)) {
  const { bin } = spec;
  t.test(`target ${target}`, async (t) => {
    const own = stage(target);
    const chain = ancestry(own);

    t.test('adds configuration only: every layer is the others\'', async (t) => {
      t.equal(own.base, programs.name, `FROM ${programs.name}`);
      t.same(own.instructions.filter((i) => !CONFIG_ONLY.has(i.op)), [], `only ${[...CONFIG_ONLY].join(', ')}`);
    });

    t.test('USER: numeric; non-root, but for node-cache', async (t) => {
      const user = chain.flatMap((s) => s.instructions.filter((i) => i.op === 'USER')).at(0);
      t.ok(user, 'USER is set');
      const [uid, gid] = user!.args.split(':');
      t.match(uid, /^\d+$/, 'numeric uid (the kubelet can verify runAsNonRoot)');
      if (bin === 'node-cache') {
        t.same([uid, gid], ['0', '0'], 'root, as the original: it sets up an interface and netfilter rules');
        t.same(spec.workload.spec.template.spec.containers[0].securityContext.capabilities.add, ['NET_ADMIN'], 'with NET_ADMIN added, nothing else');
        return;
      }
      t.ok(Number(uid) > 0 && Number(gid ?? uid) > 0, `uid ${uid} and gid ${gid} are not root`);
      if (spec.workload) t.equal(Number(uid), spec.workload.spec.template.spec.securityContext.runAsUser, 'the uid the Deployment states');
    });

    t.test(`ENTRYPOINT: node with the shebang's flags on bin ${bin}`, async (t) => {
      const entry = own.instructions.filter((i) => i.op === 'ENTRYPOINT').at(-1);
      t.ok(entry, 'an ENTRYPOINT');
      const argv: string[] = JSON.parse(entry!.args);
      t.ok(Array.isArray(argv), 'exec form (no shell in the image)');
      t.equal(argv[0], DISTROLESS_NODE, "the runtime's node");
      t.same(argv.slice(1, -1), shebangFlags(bin), "the flags of the bin's shebang");
      const wd = workdirAt(programs, programs.instructions.length, '/');
      t.equal(argv.at(-1), posix.join(wd, pkg.bin[bin]), `the script is package.json's bin ${bin}`);
      const src = pkg.bin[bin].replace(/^dist\//, '').replace(/\.js$/, '.ts');
      t.ok(existsSync(join(repoRoot, src)), `${src} exists`);
      t.equal(tsconfig.compilerOptions.outDir, 'dist', 'tsc writes dist/');
      t.ok(tsconfig.include.includes('cmd/**/*.ts') && tsconfig.include.includes('pkg/**/*.ts'), 'tsc compiles cmd/ and pkg/');
    });

    t.test("the header says how to build it, with the manifests' tag", async (t) => {
      const tag = new RegExp(` --target ${target} -t (\\S+) \\.`).exec(dockerfile.header)?.[1];
      t.ok(tag, 'the header says how to build');
      t.equal(tag!.split('/').pop()!.split(':')[0], bin, 'named after the bin');
      if (spec.workload) t.ok(spec.workload.spec.template.spec.containers.map((c: any) => c.image).includes(tag), `${tag} is an image of the ${spec.workload.kind}`);
    });
  });
}
