// The other two ConfigSyncs (the directory's is config-dir.test.ts): the ConfigMap through the API,
// as kube-dns's store hands over its events, and the defaults.
import t from 'tap';
import type { Test } from 'tap';
import { ConfigMapSync, FixedConfig } from '../../pkg/config/config.ts';
import type { KubeDnsConfig } from '../../pkg/config/config.ts';
import { createLogger, setSink } from '../../pkg/log/log.ts';
import { plainLine } from '../helpers/log-lines.ts';

function captureLog(t: Test): string[] {
  const lines: string[] = [];
  setSink((line) => lines.push(plainLine(line)));
  t.teardown(() => setSink((line) => process.stderr.write(line)));
  return lines;
}

t.test('ConfigMapSync: its own ConfigMap only, each new version once, an invalid one counted and logged, deleted = defaults', async (t) => {
  const lines = captureLog(t);
  const sync = new ConfigMapSync('kube-system', 'kube-dns', createLogger('test'));
  const seen: [KubeDnsConfig, string][] = [];
  sync.update('kube-system', 'kube-dns', { upstreamNameservers: '["8.8.8.8"]' });
  t.same(seen, [], 'nothing before start()');
  sync.start((c, v) => seen.push([c, v]));
  t.equal(sync.describe(), 'ConfigMap kube-system/kube-dns');
  sync.update('kube-system', 'kube-dns', { upstreamNameservers: '["8.8.8.8"]' });
  sync.update('kube-system', 'kube-dns', { upstreamNameservers: '["8.8.8.8"]' });
  sync.update('kube-system', 'decoy', { upstreamNameservers: '["6.6.6.6"]' });
  sync.update('default', 'kube-dns', { upstreamNameservers: '["6.6.6.6"]' });
  t.equal(seen.length, 1, 'the same data again is no new version; other ConfigMaps are not ours');
  t.same(seen[0][0].upstreamNameservers, ['8.8.8.8']);
  t.same(sync.current(), seen[0][0]);

  sync.update('kube-system', 'kube-dns', { upstreamNameservers: '["dns.google"]' });
  t.equal(sync.invalidUpdates, 1);
  t.match(lines.join(''), /invalid configuration, ignoring update configMap=kube-system\/kube-dns key=upstreamNameservers entry=dns\.google/);
  t.same(sync.current().upstreamNameservers, ['8.8.8.8'], 'the previous version stays');

  sync.update('kube-system', 'kube-dns', null);
  t.equal(seen.length, 2);
  t.same(seen[1], [{ stubDomains: new Map(), upstreamNameservers: [], federations: new Map(), visibility: null }, ''], 'deleted: the defaults');
  sync.stop();
  sync.update('kube-system', 'kube-dns', { federations: 'a=b.c' });
  t.equal(seen.length, 2, 'nothing after stop()');
});

t.test('FixedConfig: the defaults, never a change', async (t) => {
  const f = new FixedConfig('--nameservers');
  f.start();
  t.same(f.current().upstreamNameservers, []);
  t.equal(f.describe(), '--nameservers');
  t.equal(f.invalidUpdates, 0);
  f.stop();
});
