// --config-dir against real directories laid out the way the kubelet publishes a ConfigMap volume:
//   ..2026_01_01_00_00_00.1/<key>   the data
//   ..data -> ..2026_01_01_00_00_00.1   swapped atomically on update
//   <key> -> ..data/<key>
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { ConfigDirWatcher, configVersion, readConfigDir } from '../../pkg/config/config.ts';
import type { KubeDnsConfig } from '../../pkg/config/config.ts';
import { createLogger, setSink } from '../../pkg/log/log.ts';
import { plainLine } from '../helpers/log-lines.ts';

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'config-dir-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

let generation = 0;
/** Publishes `data` as the kubelet does: a new timestamped dir, then an atomic swap of ..data. */
function publish(dir: string, data: Record<string, string | Buffer>): void {
  const ts = `..2026_01_01_00_00_00.${++generation}`;
  mkdirSync(join(dir, ts));
  for (const [k, v] of Object.entries(data)) writeFileSync(join(dir, ts, k), v);
  symlinkSync(ts, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const k of Object.keys(data)) {
    try {
      symlinkSync(join('..data', k), join(dir, k));
    } catch {
      // the key's link exists from an earlier version
    }
  }
}

function captureLog(t: Test): string[] {
  const lines: string[] = [];
  setSink((line) => lines.push(plainLine(line)));
  t.teardown(() => setSink((line) => process.stderr.write(line)));
  return lines;
}

const stub = '{"acme.local": ["1.2.3.4:5353"]}';

t.test('a missing directory is the empty config', async (t) => {
  const dir = join(tempDir(t), 'absent');
  t.same(readConfigDir(dir), { config: { stubDomains: new Map(), upstreamNameservers: [], federations: new Map(), visibility: null }, version: '' });
  const changes: string[] = [];
  const w = new ConfigDirWatcher(dir, 60_000, createLogger('test'));
  t.teardown(() => w.stop());
  w.start((_c, v) => changes.push(v));
  t.same(changes, [], 'no change from the defaults');
  t.equal(w.current().upstreamNameservers.length, 0);
  t.equal(w.version(), '');
});

t.test('a ConfigMap volume: symlinked keys read, dot-names and subdirectories skipped', async (t) => {
  const dir = tempDir(t);
  captureLog(t);
  publish(dir, { stubDomains: stub, upstreamNameservers: '["8.8.8.8"]' });
  mkdirSync(join(dir, 'federations')); // a subdirectory named like a key: not a file
  writeFileSync(join(dir, 'federations', 'x'), 'bad=');
  writeFileSync(join(dir, '.hidden'), 'not json');
  symlinkSync('..data/nowhere', join(dir, 'dangling'));

  const seen: [KubeDnsConfig, string][] = [];
  const w = new ConfigDirWatcher(dir, 60_000, createLogger('test'));
  t.teardown(() => w.stop());
  w.start((c, v) => seen.push([c, v]));
  t.equal(seen.length, 1, 'the initial config is announced by start()');
  const [config, version] = seen[0];
  t.same([...config.stubDomains], [['acme.local', ['1.2.3.4:5353']]]);
  t.same(config.upstreamNameservers, ['8.8.8.8']);
  t.equal(config.federations.size, 0);
  t.equal(version, configVersion(new Map([['stubDomains', stub], ['upstreamNameservers', '["8.8.8.8"]']])));
  t.equal(w.current(), config);
  t.same(readConfigDir(dir), { config, version });
});

t.test('updates are announced once per new version', async (t) => {
  const dir = tempDir(t);
  const lines = captureLog(t);
  publish(dir, { upstreamNameservers: '["8.8.8.8"]' });
  const seen: KubeDnsConfig[] = [];
  const w = new ConfigDirWatcher(dir, 60_000, createLogger('test'));
  t.teardown(() => w.stop());
  w.start((c) => seen.push(c));
  w.poll();
  t.equal(seen.length, 1, 'an unchanged directory is not announced again');

  publish(dir, { upstreamNameservers: '["1.1.1.1", "1.0.0.1"]', stubDomains: stub });
  w.poll();
  t.equal(seen.length, 2);
  t.same(seen[1].upstreamNameservers, ['1.1.1.1', '1.0.0.1']);
  t.equal(seen[1].stubDomains.size, 1);
  t.equal(w.stats.updates, 2);
  t.ok(lines.some((l) => / I test: configuration updated .*upstreamNameservers=2/.test(l)));

  // ConfigMap data removed: back to the defaults, version ''
  for (const k of ['upstreamNameservers', 'stubDomains']) unlinkSync(join(dir, k));
  w.poll();
  t.equal(seen.length, 3);
  t.same(seen[2].upstreamNameservers, []);
  t.equal(w.version(), '');
});

t.test('an invalid update: one warning naming key and entry, counted, previous config kept', async (t) => {
  const dir = tempDir(t);
  const lines = captureLog(t);
  publish(dir, { upstreamNameservers: '["8.8.8.8"]' });
  const seen: KubeDnsConfig[] = [];
  const w = new ConfigDirWatcher(dir, 60_000, createLogger('test'));
  t.teardown(() => w.stop());
  w.start((c) => seen.push(c));
  const good = w.current();
  const goodVersion = w.version();

  publish(dir, { upstreamNameservers: '["dns.google"]' });
  w.poll();
  w.poll();
  w.poll();
  const warnings = lines.filter((l) => / W test: /.test(l));
  t.equal(warnings.length, 1, 'reported once, not on every poll');
  t.match(warnings[0], /invalid configuration, ignoring update/);
  t.match(warnings[0], /key=upstreamNameservers/);
  t.match(warnings[0], /entry=dns\.google/);
  t.equal(w.stats.invalidUpdates, 1);
  t.equal(w.current(), good);
  t.equal(w.version(), goodVersion);
  t.equal(seen.length, 1);

  publish(dir, { upstreamNameservers: '{not json' });
  w.poll();
  t.equal(w.stats.invalidUpdates, 2);
  t.match(lines.filter((l) => / W test: /.test(l))[1], /key=upstreamNameservers.*invalid JSON/);

  publish(dir, { upstreamNameservers: '["9.9.9.9"]' });
  w.poll();
  t.equal(seen.length, 2, 'a fixed config is taken again');
  t.same(w.current().upstreamNameservers, ['9.9.9.9']);
});

t.test('a file that is not UTF-8 is an invalid update', async (t) => {
  const dir = tempDir(t);
  const lines = captureLog(t);
  writeFileSync(join(dir, 'federations'), Buffer.from([0x61, 0x3d, 0xff, 0xfe]));
  const w = new ConfigDirWatcher(dir, 60_000, createLogger('test'));
  t.teardown(() => w.stop());
  w.start(() => t.fail('no change expected'));
  t.equal(w.stats.invalidUpdates, 1);
  t.match(lines.join(''), /key=federations .*not valid UTF-8/);
  t.throws(() => readConfigDir(dir), { code: 'CONFIG_INVALID', key: 'federations' });
});

t.test('a directory that cannot be read keeps the config and warns once', async (t) => {
  const base = tempDir(t);
  const lines = captureLog(t);
  const dir = join(base, 'cfg');
  writeFileSync(dir, 'a file where a directory should be');
  const w = new ConfigDirWatcher(dir, 60_000, createLogger('test'));
  t.teardown(() => w.stop());
  w.start(() => t.fail('no change expected'));
  w.poll();
  t.equal(w.stats.readErrors, 2);
  t.equal(lines.filter((l) => /cannot read the config directory/.test(l)).length, 1);
  t.throws(() => readConfigDir(dir), { code: 'ENOTDIR' });
});

t.test('the timer polls until stop()', async (t) => {
  const dir = tempDir(t);
  captureLog(t);
  let announce: (c: KubeDnsConfig) => void = () => {};
  const w = new ConfigDirWatcher(dir, 10, createLogger('test'));
  t.teardown(() => w.stop());
  w.start((c) => announce(c));
  const changed = new Promise<KubeDnsConfig>((resolve) => (announce = resolve));
  publish(dir, { federations: 'myfed=example.com' });
  const c = await changed;
  t.same([...c.federations], [['myfed', 'example.com']]);
  w.stop();
  const polls = w.stats.polls;
  await new Promise((r) => setTimeout(r, 50));
  t.equal(w.stats.polls, polls, 'no polls after stop()');
});

t.test('a non-positive period is refused', async (t) => {
  t.throws(() => new ConfigDirWatcher('/x', 0), RangeError);
});
