// CoreDNS's metrics of the answering plugins, served as node-cache serves a Corefile (kube-dns -conf
// reports into the same AnsweringMetrics): coredns_hosts_entries by file and its last reload's time,
// re-read when the file changes; coredns_template_matches_total by server, zone, class and type. The
// zone engine on loopback, a real dnsmasq upstream, dig.

import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from '../../pkg/metrics/registry.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/ports.ts';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { ZoneEngine } from '../../pkg/nodecache/engine.ts';
import { planCorefile } from '../../pkg/nodecache/plan.ts';
import { RequestMetrics } from '../../pkg/nodecache/request-metrics.ts';

t.test('hosts entries and reloads, template matches, under CoreDNS names and labels', async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.9 www.example.com']);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-plugin-metrics-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, '10.0.0.1 one.lan\n10.0.0.2 two.lan two-alias.lan\n');
  const port = await freePort();
  const text = `.:${port} {
  bind 127.0.0.1
  hosts ${hosts} {
    10.0.0.9 inline.lan
    reload 200ms
    fallthrough
  }
  template IN A example.net {
    match "^(?P<host>[a-z]+)[.]example[.]net[.]$"
    answer "{{ .Name }} 60 IN A 10.9.9.9"
  }
  forward . 127.0.0.1:${up.port}
}
`;
  const registry = new Registry();
  const engine = new ZoneEngine(planCorefile(parseCorefile(text), { defaultPort: port }), createLogger('test/node-cache'), { metrics: new RequestMetrics(registry) });
  await engine.start();
  t.teardown(() => engine.stop());
  const sample = async (re: RegExp) => (await registry.metrics()).match(re)?.[1];
  const entries = new RegExp(`^coredns_hosts_entries\\{hostsfile="${hosts.replace(/[.]/g, '\\.')}"\\} (\\d+)$`, 'm');
  const reloaded = /^coredns_hosts_reload_timestamp_seconds (\S+)$/m;
  t.equal(await sample(entries), '4', 'three names of the file and one written inline');
  const first = Number(await sample(reloaded));
  t.ok(Math.abs(first - Date.now() / 1000) < 10, `the last read's time, in seconds since the epoch (${first})`);

  t.same(answers(await dig(port, 'two-alias.lan')), ['10.0.0.2'], 'hosts answers');
  t.same(answers(await dig(port, 'web.example.net')), ['10.9.9.9'], 'the template answers');
  t.same(answers(await dig(port, 'db.example.net')), ['10.9.9.9']);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.9'], 'the rest forwarded');
  t.equal(await sample(new RegExp(`^coredns_template_matches_total\\{server="dns://127\\.0\\.0\\.1:${port}",zone="example\\.net\\.",view="",class="IN",type="A"\\} (\\d+)$`, 'm')), '2', 'two template matches, by server, zone, class and type');

  await new Promise((r) => setTimeout(r, 1100));
  writeFileSync(hosts, '10.0.0.1 one.lan\n');
  await eventually(async () => answers(await dig(port, 'two.lan')).length === 0, 'the edited file re-read', 5000);
  t.equal(await sample(entries), '2', 'one name of the file and the inline one');
  t.ok(Number(await sample(reloaded)) > first, 'the reload time moved on');
});
