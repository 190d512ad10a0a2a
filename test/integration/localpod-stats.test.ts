// The local pod's sidecar reads the statistics of the pod's own dnscache: real queries on the client
// port move kubedns_dnsmasq_misses and _hits by what they were. The probes are set an hour apart, so
// at most one probe (one miss: its first question) is asked through dnscache during the test.

import t from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startLocalPod } from '../helpers/localpod.ts';
import { sample, scrape } from '../helpers/sidecar.ts';

const NAMES = ['web.default.svc.cluster.local', 'db.default.svc.cluster.local', 'peers.default.svc.cluster.local'];
const REPEATS = 2;

t.test('kubedns_dnsmasq_misses and _hits move with real queries through the client port', async (t) => {
  const pod = await startLocalPod(t, ['--probe-interval=1h', '--stats-interval=200ms']);
  const { ports } = pod;
  await eventually(async () => sample(await scrape(ports.sidecar), 'kubedns_dnsmasq_polls_total') >= 1, 'the sidecar read the statistics');
  const before = await scrape(ports.sidecar);

  for (const name of NAMES) t.ok(answers(await dig(ports.dns, name)).length > 0, `${name}: a miss, answered by kube-dns`);
  for (let i = 0; i < REPEATS; i++) for (const name of NAMES) await dig(ports.dns, name);

  const grew = (m: Map<string, number>, name: string) => sample(m, name) - sample(before, name);
  const after = await eventually(async () => {
    const m = await scrape(ports.sidecar);
    return grew(m, 'kubedns_dnsmasq_misses') >= NAMES.length && grew(m, 'kubedns_dnsmasq_hits') >= NAMES.length * REPEATS && m;
  }, 'the sidecar counted the queries');
  t.equal(grew(after, 'kubedns_dnsmasq_hits'), NAMES.length * REPEATS, 'one hit per repeated question');
  const misses = grew(after, 'kubedns_dnsmasq_misses');
  t.ok(misses === NAMES.length || misses === NAMES.length + 1, `one miss per new question (and perhaps the one probe's): ${misses}`);
  t.equal(sample(after, 'kubedns_dnsmasq_max_size'), 1000, "the pod's dnscache: --cache-size=1000");

  const hitsBind = await dig(ports.dns, 'hits.bind', 'TXT', ['-c', 'CH']);
  t.equal(`"${sample(after, 'kubedns_dnsmasq_hits')}"`, hitsBind.answer[0]?.data, "the sidecar's total is dnscache's own hits.bind");
  t.equal(sample(after, 'kubedns_dnsmasq_errors'), 0, 'no failed statistics round');
});
