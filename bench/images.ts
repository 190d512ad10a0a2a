// What a node pulls for our images (issue 27: all of them together ≤ 1.25× the distroless Node runtime
// they stand on). Reads the images test/cluster/images/build.sh built (npm run bench:images builds
// them first) and the runtime base stand-in, saves them with podman into one archive (a layer two
// images share is in it once, as a registry serves it once), and counts each layer's bytes as they
// are stored (uncompressed) and as a registry sends them (gzip -6, what `docker push` writes).
//
// Writes bench/results/images-<date>.{json,md}.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { repoRoot } from '../test/helpers/process.ts';
import { PODMAN_ENV, builtImages } from '../test/cluster/harness/image-pod.ts';
import { writeResults } from './report.ts';

const RUNTIME = 'gcr.io/distroless/nodejs24-debian12:nonroot';

interface Bytes {
  stored: number;
  sent: number;
}

/** Each layer of `tags`, once, with its bytes; and the layers each tag has. */
function layersOf(tags: string[], dir: string): { layers: Map<string, Bytes>; byTag: Map<string, string[]> } {
  const archive = join(dir, `save-${tags.length}.tar`);
  execFileSync('podman', ['save', '--multi-image-archive', '--format', 'docker-archive', '-o', archive, ...tags], { env: PODMAN_ENV, stdio: ['ignore', 'ignore', 'inherit'] });
  const manifest = JSON.parse(execFileSync('tar', ['-xOf', archive, 'manifest.json'], { encoding: 'utf8' })) as { RepoTags: string[]; Layers: string[] }[];
  const layers = new Map<string, Bytes>();
  const byTag = new Map<string, string[]>();
  for (const image of manifest) {
    byTag.set(image.RepoTags[0], image.Layers);
    for (const layer of image.Layers) {
      if (layers.has(layer)) continue;
      const bytes = execFileSync('tar', ['-xOf', archive, layer], { maxBuffer: 1 << 30 });
      layers.set(layer, { stored: bytes.length, sent: gzipSync(bytes, { level: 6 }).length });
    }
  }
  rmSync(archive);
  return { layers, byTag };
}

const sum = (bs: Iterable<Bytes>): Bytes => [...bs].reduce((a, b) => ({ stored: a.stored + b.stored, sent: a.sent + b.sent }), { stored: 0, sent: 0 });
const mb = (n: number) => (n / 1e6).toFixed(1);

const built = builtImages();
if (built === null) throw new Error('the images are not built: run bash test/cluster/images/build.sh (npm run bench:images does)');
const tags = Object.keys(built).sort();
const dir = mkdtempSync(join(tmpdir(), 'kdt-images-'));
try {
  const ours = layersOf(tags, dir);
  const runtime = sum(layersOf([RUNTIME], dir).layers.values());
  const all = sum(ours.layers.values());
  const perImage = tags.map((tag) => {
    const key = [...ours.byTag.keys()].find((k) => k.endsWith(tag))!;
    return { tag, layers: ours.byTag.get(key)!.length, ...sum(ours.byTag.get(key)!.map((l) => ours.layers.get(l)!)) };
  });
  const ratio = { stored: all.stored / runtime.stored, sent: all.sent / runtime.sent };
  const when = new Date().toISOString();
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const md = [
    `# Images: what a node pulls (${when}, ${commit})`,
    '',
    `The ${tags.length} images built from the Dockerfile, saved together (a layer they share counted once), beside the runtime base ${RUNTIME} (bases.sh's stand-in). Stored: uncompressed; sent: gzip -6.`,
    '',
    '| image | layers | stored MB | sent MB |',
    '|---|---|---|---|',
    ...perImage.map((p) => `| ${p.tag} | ${p.layers} | ${mb(p.stored)} | ${mb(p.sent)} |`),
    `| **all of them, each layer once** | ${ours.layers.size} | **${mb(all.stored)}** | **${mb(all.sent)}** |`,
    `| the runtime base | | ${mb(runtime.stored)} | ${mb(runtime.sent)} |`,
    '',
    `All of them against the runtime base: **${ratio.stored.toFixed(3)}×** stored, **${ratio.sent.toFixed(3)}×** sent (goal ≤ 1.25×).`,
    '',
  ].join('\n');
  writeResults('images', when, { commit, runtime, all, ratio, perImage, layers: Object.fromEntries(ours.layers) }, md);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
