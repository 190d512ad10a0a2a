// kube-dns's fair shares, run as users run it (the real program, a cluster file): one asker
// (127.0.0.66) floods made-up names while another (127.0.0.2, real dig) asks Services and made-up
// names. With --fair-share-busy low enough for this machine's flood to reach it, the flooder is
// named in the log, counted in kubedns_fair_share_*, and let go after; the other is answered
// throughout.

import t from 'tap';
import { eventually } from '../helpers/eventually.ts';
import { askFrom, floodNames } from '../helpers/flood.ts';
import { startKubeDns, yamlDocs, service } from '../helpers/kubedns.ts';
import { scrape, sample } from '../helpers/sidecar.ts';

const cluster = yamlDocs(...Array.from({ length: 5 }, (_, i) => service('default', `svc${i}`, `clusterIP: 10.96.1.${i + 1}\nclusterIPs: [10.96.1.${i + 1}]`)));

t.test('a flooding asker named, counted, held to its share and let go; the other answered throughout', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster, args: ['--fair-share-busy=5', '--fair-share-floor=50'] });
  const stop = await floodNames(t, kd.dnsPort, '127.0.0.66', 10_000, 'default.svc.cluster.local');
  const names = [...Array.from({ length: 5 }, (_, i) => `svc${i}.default.svc.cluster.local`), ...Array.from({ length: 5 }, (_, i) => `none${i}.default.svc.cluster.local`)];
  // Asked while the flood runs: two askers, one of them over any fair share.
  const other = await askFrom(kd.dnsPort, '127.0.0.2', names);
  await kd.program.waitFor(/asker limited: its cache misses over a fair share are dropped.*asker=127\.0\.0\.66/, 10_000);
  t.equal(other.answered, 10, `the other asker: every question answered (slowest ${Math.round(other.slowestMs)} ms)`);
  const m = await scrape(kd.httpPort);
  t.ok(sample(m, 'kubedns_fair_share_dropped_total') > 0, `the flood's misses over its share dropped (${sample(m, 'kubedns_fair_share_dropped_total')})`);
  t.ok(sample(m, 'kubedns_fair_share_top_dropped{rank="1",asker="127.0.0.66"}') > 0, 'the flooder first in the table of limited askers');
  stop();
  await kd.program.waitFor(/asker no longer limited.*asker=127\.0\.0\.66/, 5_000);
  // Sharing ends after a calm second under --fair-share-busy=5: later where other tests load this
  // machine (the thread's utilisation counts the time its callbacks wait for a CPU).
  const after = await eventually(async () => {
    const m = await scrape(kd.httpPort);
    return sample(m, 'kubedns_fair_share_sharing') === 0 && m;
  }, 'sharing over', 10_000, 200).catch(() => scrape(kd.httpPort));
  t.equal(sample(after, 'kubedns_fair_share_sharing'), 0, 'no longer shared');
  t.equal(sample(after, 'kubedns_fair_share_limited_askers'), 0);
});

t.test('--fair-share-busy=0: nothing shared, nothing dropped', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster, args: ['--fair-share-busy=0'] });
  const stop = await floodNames(t, kd.dnsPort, '127.0.0.66', 10_000, 'default.svc.cluster.local');
  await new Promise((r) => setTimeout(r, 1500));
  stop();
  t.notMatch(kd.program.output(), /asker limited/);
  t.notOk((await scrape(kd.httpPort)).has('kubedns_fair_share_dropped_total'), 'and no fair-share metrics');
});
