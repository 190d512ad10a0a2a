// A flood of names that do not exist (the "water torture" pattern, and what ndots:5 search walks send)
// must cost kube-dns no memory: NXDOMAIN and NODATA answers share one template per zone, and pod
// records (any dashed address answers) are not kept either. Names that exist still answer from the
// cache, and the cache stays within --cache-bytes.

import t from 'tap';
import { Rcode, Type } from '../../pkg/dns/constants.ts';
import { parseMessage } from '../../pkg/dns/codec.ts';
import { askAll } from '../helpers/clients.ts';
import { query } from '../helpers/dns-server.ts';
import { dig } from '../helpers/dig.ts';
import { startKubeDns, yamlDocs, service } from '../helpers/kubedns.ts';
import { scrape, sample } from '../helpers/sidecar.ts';
import { startProgram, testWorkers } from '../helpers/process.ts';

const services = Array.from({ length: 60 }, (_, i) => service('default', `svc${i}`, `clusterIP: 10.96.1.${i + 1}\nclusterIPs: [10.96.1.${i + 1}]`));
const cluster = yamlDocs(...services);
const random = (): string => Math.random().toString(36).slice(2, 12);

t.test('random names and random pod names leave the answer cache as it was, and answer right', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  const before = sample(await scrape(kd.httpPort), 'kubedns_answer_cache_entries');
  const names = [
    ...Array.from({ length: 1500 }, () => `r${random()}.default.svc.cluster.local`),
    ...Array.from({ length: 500 }, () => `${random()}.svc.cluster.local`),
    ...Array.from({ length: 500 }, (_, i) => `10-${i >> 8}-${i & 255}-${(i * 7) & 255}.default.pod.cluster.local`),
  ];
  const replies = await askAll(t, kd.dnsPort, names.map((n, i) => query(n, Type.A, i)));
  t.equal(replies.length, names.length, 'every query answered');
  const byId = new Map(replies.map((r) => [r.readUInt16BE(0), parseMessage(r)]));
  const nx = byId.get(7)!;
  t.match(nx, { rcode: Rcode.NXDOMAIN, aa: true, answers: [], questions: [{ name: names[7] }] });
  t.match(nx.authorities, [{ name: 'cluster.local', type: Type.SOA, data: { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local' } }]);
  t.equal([...byId.values()].filter((m) => m.rcode === Rcode.NXDOMAIN).length, 2000, 'every made-up service name is NXDOMAIN');
  t.match(byId.get(2000 + 5)!, { rcode: Rcode.NOERROR, answers: [{ type: Type.A, data: { address: '10.0.5.35' } }] }, 'pod records still answer');
  const after = await scrape(kd.httpPort);
  t.equal(sample(after, 'kubedns_answer_cache_entries'), before + 1, 'one shared NXDOMAIN template, no entry per name');
  t.ok(sample(after, 'kubedns_answer_cache_bytes') < 2000, 'and a few hundred bytes');

  // The asker's case is echoed from the shared template; dig (a third implementation) reads it.
  const mixed = await dig(kd.dnsPort, 'NoSuch.Default.SVC.cluster.local', 'A', ['+tcp']);
  t.equal(mixed.status, 'NXDOMAIN');
  t.match(mixed.raw, /NoSuch\.Default\.SVC\.cluster\.local\.\s+IN\s+A/);
  t.match(mixed.raw, /cluster\.local\.\s+30\s+IN\s+SOA\s+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\./);
  const nodata = await dig(kd.dnsPort, 'svc3.default.svc.cluster.local', 'AAAA');
  t.equal(nodata.status, 'NOERROR');
  t.same(nodata.answer, []);
  t.match(nodata.raw, /AUTHORITY SECTION:\ncluster\.local\.\s+30\s+IN\s+SOA/);
  t.same((await dig(kd.dnsPort, 'svc3.default.svc.cluster.local')).answer.map((a) => a.data), ['10.96.1.4']);
});

t.test('--cache-bytes bounds the answers kept; the metrics say how much is used', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster, args: ['--cache-bytes=8Ki'] });
  const replies = await askAll(t, kd.dnsPort, services.map((_, i) => query(`svc${i}.default.svc.cluster.local`, Type.A, i)));
  t.equal(replies.length, services.length);
  t.ok(replies.every((r) => parseMessage(r).answers.length === 1), 'each name answers its cluster IP');
  const m = await scrape(kd.httpPort);
  // Every thread an answer cache of --cache-bytes (the kernel spreads clients, not names), summed.
  t.equal(sample(m, 'kubedns_answer_cache_max_bytes'), 8192 * testWorkers());
  t.ok(sample(m, 'kubedns_answer_cache_bytes') <= 8192 * testWorkers(), 'within the budget');
  t.ok(sample(m, 'kubedns_answer_cache_entries') < services.length, 'fewer entries than names asked');
  t.ok(sample(m, 'kubedns_answer_cache_evictions_total') > 0, 'the rest pushed out, counted');
});

t.test('a bad --cache-bytes exits 2 naming the flag', async (t) => {
  const p = startProgram(t, 'kube-dns', ['--cache-bytes=lots', '--cluster-file=/dev/null']);
  t.equal(await p.exited, 2);
  t.match(p.output(), /--cache-bytes/);
});
