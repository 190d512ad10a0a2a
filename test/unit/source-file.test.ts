import { mkdtempSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { createLogger, setSink } from '../../pkg/log/log.ts';
import { plainLine } from '../helpers/log-lines.ts';
import { CLUSTER_KINDS } from '../../pkg/cluster/kinds.ts';
import { FileSource } from '../../pkg/source/file.ts';
import { eventually } from '../helpers/eventually.ts';
import type { SourceEvent, SourceSink } from '../../pkg/source/source.ts';

// Log lines as a user sees them on stderr.
const logLines: string[] = [];
setSink((line) => void logLines.push(plainLine(line)));

/** Records what the source delivers: batches of events, each closed by flush(). */
class RecordingSink implements SourceSink {
  batches: SourceEvent[][] = [];
  pending: SourceEvent[] = [];
  syncedCalls = 0;
  event(e: SourceEvent): void {
    this.pending.push(e);
  }
  flush(): void {
    this.batches.push(this.pending);
    this.pending = [];
  }
  synced(): void {
    this.syncedCalls++;
  }
  /** The batches as `type kind ns/name` strings. */
  summary(from = 0): string[][] {
    return this.batches
      .slice(from)
      .map((b) => b.map((e) => `${e.type} ${e.kind} ${e.object.metadata.namespace ?? 'default'}/${e.object.metadata.name}`));
  }
}

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'kube-dns-file-source-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startSource(t: Test, path: string, sink: RecordingSink): Promise<FileSource> {
  const source = new FileSource(path, { kinds: CLUSTER_KINDS.map((k) => k.kind), log: createLogger('test/file-source'), pollIntervalMs: 100 });
  t.teardown(() => source.stop());
  await source.start(sink);
  return source;
}

const svc = (name: string, ip: string, ns = 'default') =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  clusterIP: ${ip}\n`;
const stream = (...docs: string[]) => docs.join('---\n');

t.test('initial load, then edits in place: add, update, delete', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, stream(svc('a', '10.0.0.1'), svc('b', '10.0.0.2'), svc('c', '10.0.0.3')));
  const sink = new RecordingSink();
  const source = await startSource(t, file, sink);

  t.equal(source.describe(), `cluster file ${file}`);
  await t.rejects(source.start(sink), { code: 'SOURCE_ERR_STARTED' }, 'a second start is refused');
  t.equal(sink.syncedCalls, 1, 'synced once the first load is in');
  t.same(sink.summary(), [['add Service default/a', 'add Service default/b', 'add Service default/c']]);
  t.same(source.stats, { loads: 1, rejectedLoads: 0, objects: 3 });

  writeFileSync(file, stream(svc('a', '10.0.0.1'), svc('b', '10.0.0.20'), svc('d', '10.0.0.4')));
  await eventually(() => sink.batches.length === 2, 'the edit');
  t.same(sink.summary(1), [['update Service default/b', 'add Service default/d', 'delete Service default/c']]);
  const update = sink.batches[1][0];
  t.same((update.object.spec as { clusterIP: string }).clusterIP, '10.0.0.20', 'an update carries the new object');
  const deleted = sink.batches[1][2];
  t.same(deleted.object.metadata, { name: 'c', namespace: 'default' }, "a delete carries the object's identity");
  t.same(source.stats, { loads: 2, rejectedLoads: 0, objects: 3 });
  t.equal(sink.syncedCalls, 1, 'synced is called once only');

  // The same objects with different formatting are no change: no events, no flush.
  writeFileSync(file, '# reformatted\n' + stream(svc('a', '10.0.0.1'), svc('b', '10.0.0.20'), svc('d', '10.0.0.4')));
  await eventually(() => source.stats.loads === 3, 'the reformatted load');
  t.equal(sink.batches.length, 2, 'nothing emitted');
});

t.test('an editor replacing the file (write elsewhere, rename over)', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, svc('a', '10.0.0.1'));
  const sink = new RecordingSink();
  await startSource(t, file, sink);

  const tmp = join(dir, '.cluster.yaml.swp');
  writeFileSync(tmp, svc('a', '10.0.0.9'));
  renameSync(tmp, file);
  await eventually(() => sink.batches.length === 2, 'the replaced file');
  t.same(sink.summary(1), [['update Service default/a']]);
});

t.test('a ConfigMap volume swapping its ..data symlink', async (t) => {
  // The kubelet's layout: cluster.yaml → ..data/cluster.yaml, ..data → ..<timestamp> (a directory).
  const dir = tempDir(t);
  mkdirSync(join(dir, '..2026_01_01_00_00_00.1'));
  writeFileSync(join(dir, '..2026_01_01_00_00_00.1', 'cluster.yaml'), svc('a', '10.0.0.1'));
  symlinkSync('..2026_01_01_00_00_00.1', join(dir, '..data'));
  symlinkSync('..data/cluster.yaml', join(dir, 'cluster.yaml'));
  const sink = new RecordingSink();
  await startSource(t, join(dir, 'cluster.yaml'), sink);
  t.same(sink.summary(), [['add Service default/a']]);

  mkdirSync(join(dir, '..2026_01_01_00_01_00.2'));
  writeFileSync(join(dir, '..2026_01_01_00_01_00.2', 'cluster.yaml'), svc('b', '10.0.0.2'));
  symlinkSync('..2026_01_01_00_01_00.2', join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  rmSync(join(dir, '..2026_01_01_00_00_00.1'), { recursive: true });
  await eventually(() => sink.batches.length === 2, 'the swapped volume');
  t.same(sink.summary(1), [['add Service default/b', 'delete Service default/a']]);
});

t.test('a symlink to a file in another directory: the stat poll sees edits fs.watch cannot', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'watched'));
  mkdirSync(join(dir, 'elsewhere'));
  const target = join(dir, 'elsewhere', 'real.yaml');
  writeFileSync(target, svc('a', '10.0.0.1'));
  symlinkSync(target, join(dir, 'watched', 'cluster.yaml'));
  const sink = new RecordingSink();
  await startSource(t, join(dir, 'watched', 'cluster.yaml'), sink);

  // Only 'elsewhere' changes, so no event reaches the watch on 'watched'.
  writeFileSync(target, svc('a', '10.0.0.1') + '---\n' + svc('b', '10.0.0.2'));
  await eventually(() => sink.batches.length === 2, 'the edit behind the symlink');
  t.same(sink.summary(1), [['add Service default/b']]);
});

t.test('broken YAML keeps the last good state and says where', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, stream(svc('a', '10.0.0.1'), svc('b', '10.0.0.2')));
  const sink = new RecordingSink();
  const source = await startSource(t, file, sink);

  const logged = logLines.length;
  writeFileSync(file, svc('a', '10.0.0.1') + '---\nkind: Service\nmetadata:\n  name: b\n   oops: [\n');
  await eventually(() => source.stats.rejectedLoads === 1, 'the rejection');
  const errors = logLines.slice(logged).filter((l) => / E test\/file-source: cluster file rejected/.test(l));
  t.equal(errors.length, 1, 'one error line');
  t.match(errors[0], `path=${file}`);
  t.match(errors[0], / line=\d+ col=\d+ /);
  t.match(errors[0], /err="YAML syntax error: /);

  writeFileSync(file, svc('a', '10.0.0.1') + '---\nkind: Service\nmetadata:\n  namespace: x\n');
  await eventually(() => source.stats.rejectedLoads === 2, 'the second rejection');
  t.match(logLines.at(-1), / line=9 col=1 err="Service document #2 has no metadata.name"/);

  t.equal(sink.batches.length, 1, 'nothing emitted for broken files');
  t.same(source.stats, { loads: 1, rejectedLoads: 2, objects: 2 });

  // Fixed: the diff is against the last good load (a and b), so only c is new.
  writeFileSync(file, stream(svc('a', '10.0.0.1'), svc('b', '10.0.0.2'), svc('c', '10.0.0.3')));
  await eventually(() => sink.batches.length === 2, 'the fixed file');
  t.same(sink.summary(1), [['add Service default/c']]);
});

t.test('a List and JSON', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.json');
  writeFileSync(file, readFileSync(new URL('../fixtures/servicelist.json', import.meta.url)));
  const sink = new RecordingSink();
  await startSource(t, file, sink);
  t.same(sink.summary(), [['add Service default/kubernetes', 'add Service kube-system/kube-dns']]);

  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns', namespace: 'kube-system' } },
    ],
  };
  writeFileSync(file, JSON.stringify(list, null, 2));
  await eventually(() => sink.batches.length === 2, 'the JSON List');
  t.same(sink.summary(1), [[
    'update Service default/kubernetes',
    'add ConfigMap kube-system/kube-dns',
    'delete Service kube-system/kube-dns',
  ]]);
});

t.test('a missing file is waited for', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'later.yaml');
  const logged = logLines.length;
  const sink = new RecordingSink();
  const source = await startSource(t, file, sink);
  t.equal(sink.syncedCalls, 0, 'not synced');
  const errors = logLines.slice(logged).filter((l) => l.includes(' E test/file-source: cluster file unreadable'));
  t.equal(errors.length, 1, 'one error line');
  t.match(errors[0], /not synced yet; retrying/);
  t.match(errors[0], /ENOENT/);

  writeFileSync(file, svc('a', '10.0.0.1'));
  await eventually(() => sink.syncedCalls === 1, 'the file that appeared');
  t.same(sink.summary(), [['add Service default/a']]);
  t.equal(source.stats.loads, 1);

  // Gone again: the last good state stays; back with new content: loaded.
  rmSync(file);
  await eventually(() => logLines.some((l) => l.includes('keeping the last good state; retrying')), 'the second unreadable line');
  writeFileSync(file, svc('b', '10.0.0.2'));
  await eventually(() => sink.batches.length === 2, 'the file back');
  t.same(sink.summary(1), [['add Service default/b', 'delete Service default/a']]);
});

t.test('a missing directory is waited for', async (t) => {
  const dir = tempDir(t);
  const sub = join(dir, 'not-yet');
  const sink = new RecordingSink();
  await startSource(t, join(sub, 'cluster.yaml'), sink);
  mkdirSync(sub);
  writeFileSync(join(sub, 'cluster.yaml'), svc('a', '10.0.0.1'));
  await eventually(() => sink.syncedCalls === 1, 'the file in the new directory');
  // Now watched: a rename-over in the new directory is seen too.
  writeFileSync(join(sub, 'tmp'), svc('a', '10.0.0.2'));
  renameSync(join(sub, 'tmp'), join(sub, 'cluster.yaml'));
  await eventually(() => sink.batches.length === 2, 'the edit');
  t.same(sink.summary(1), [['update Service default/a']]);
});

t.test('an empty file is an empty cluster, and synced', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, '');
  const sink = new RecordingSink();
  await startSource(t, file, sink);
  t.equal(sink.syncedCalls, 1);
  t.same(sink.summary(), [[]], 'one empty batch, flushed before synced');
});

t.test('a file truncated and then rewritten is not served empty in between', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, stream(svc('a', '10.0.0.1')));
  const sink = new RecordingSink();
  const source = await startSource(t, file, sink);
  writeFileSync(file, '');
  // Longer than the debounce and a poll, shorter than the settle time: an empty cluster here would wipe DNS.
  await new Promise((resolve) => setTimeout(resolve, 600));
  t.same(sink.summary(1), [], 'the momentarily empty file was not delivered');
  writeFileSync(file, stream(svc('a', '10.0.0.2')));
  await eventually(() => sink.batches.length === 2, 'the rewritten file');
  t.same(sink.summary(1), [['update Service default/a']], 'an update, never a delete and re-add');
  writeFileSync(file, '');
  await eventually(() => source.stats.objects === 0, 'a file that stays empty is an empty cluster', 5000);
  t.same(sink.summary(2), [['delete Service default/a']]);
});

t.test('after stop(), nothing is delivered', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, svc('a', '10.0.0.1'));
  const sink = new RecordingSink();
  const source = await startSource(t, file, sink);
  await source.stop();
  writeFileSync(file, svc('a', '10.0.0.2'));
  // Long enough for several polls and a debounce, had they still been running.
  await new Promise((r) => setTimeout(r, 600));
  t.equal(sink.batches.length, 1);
  t.equal(source.stats.loads, 1);
});

t.test('the example cluster loads cleanly', async (t) => {
  const sink = new RecordingSink();
  const source = await startSource(t, new URL('../../examples/cluster.yaml', import.meta.url).pathname, sink);
  t.equal(sink.syncedCalls, 1);
  t.equal(source.stats.objects, 16);
  t.equal(source.stats.rejectedLoads, 0);
});
