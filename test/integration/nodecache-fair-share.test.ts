// node-cache's fair shares, in the zone engine it runs (on loopback, a real dnsmasq upstream): one
// pod (127.0.0.66, dnsperf) floods new names, each a miss forwarded upstream, while another
// (127.0.0.2, dig) asks names the upstream has and does not. With the busy threshold low enough for
// this machine's flood to reach it, the flooder is limited and let go after, the other answered.
// And the program itself, its thread idle, in front of an upstream whose answers queue: a pod's TCP
// flood held to a part of the misses in flight.

import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { askFrom, floodNames, otherAmidTcpFlood, queuingUpstream } from '../helpers/flood.ts';
import { startProgram } from '../helpers/process.ts';
import { freePort } from '../helpers/ports.ts';
import { Fairness } from '../../pkg/dns/fairness.ts';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { ZoneEngine } from '../../pkg/nodecache/engine.ts';
import { planCorefile } from '../../pkg/nodecache/plan.ts';

t.test('a flooding pod held to its share in every listener, the other pod answered throughout', async (t) => {
  const up = await startDnsmasq(t, Array.from({ length: 5 }, (_, i) => `192.0.2.${i + 1} host${i}.example.com`));
  const port = await freePort();
  const events: [string, boolean][] = [];
  const fairness = new Fairness({ busyAt: 0.05, floorPerSecond: 50, onLimited: (a, on) => events.push([a.address, on]) });
  t.teardown(() => fairness.close());
  const text = `.:${port} {\n  bind 127.0.0.1\n  cache 30\n  forward . 127.0.0.1:${up.port}\n}\n`;
  const engine = new ZoneEngine(planCorefile(parseCorefile(text), { defaultPort: port }), createLogger('test/node-cache'), { fairness });
  await engine.start();
  t.teardown(() => engine.stop());
  const stop = await floodNames(t, port, '127.0.0.66', 10_000, 'flood.example.com');
  const names = [...Array.from({ length: 5 }, (_, i) => `host${i}.example.com`), ...Array.from({ length: 5 }, (_, i) => `none${i}.example.com`)];
  const other = await askFrom(port, '127.0.0.2', names);
  t.equal(other.answered, 10, `the other pod: every question answered (slowest ${Math.round(other.slowestMs)} ms)`);
  t.same(events[0], ['127.0.0.66', true], 'the flooder limited');
  t.ok(fairness.stats.dropped > 0, `its misses over its share dropped (${fairness.stats.dropped})`);
  stop();
  await new Promise((r) => setTimeout(r, 2000));
  t.same(events, [['127.0.0.66', true], ['127.0.0.66', false]], 'and let go after the flood');
});

t.test("a TCP flood pipelined through node-cache is not forwarded whole while the upstream's answers queue: another pod's misses wait behind a part of it", async (t) => {
  const up = await queuingUpstream(t);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'kdt-nodecache-fair-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'kube-dns'));
  writeFileSync(join(dir, 'Corefile.base'), `.:${port} {\n    bind 127.0.0.1\n    cache 30\n    forward . 127.0.0.1:${up.port}\n}\n`);
  writeFileSync(join(dir, 'resolv.conf'), 'nameserver 127.0.0.1\n');
  const p = startProgram(t, 'node-cache', ['-localip=127.0.0.1', '-setupinterface=false', '-setupiptables=false', `-basecorefile=${join(dir, 'Corefile.base')}`, `-corefile=${join(dir, 'Corefile')}`, `-kubednscm=${join(dir, 'kube-dns')}`, `-resolvconf=${join(dir, 'resolv.conf')}`, `-dns.port=${port}`, `-metrics-listen-address=127.0.0.1:${metricsPort}`]);
  await p.waitFor(/DNS listening/);
  const ahead = await otherAmidTcpFlood(t, port, up, 50);
  const last = ahead.slice(-3);
  t.ok(ahead.length >= 3 && Math.max(...last) < 50, `the other pod's last misses waited behind ${last.join(', ')} at the upstream (of ${ahead.join(', ')})`);
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const limit = Number(/^coredns_nodecache_fair_share_inflight_limit (\d+)/m.exec(metrics)?.[1]);
  t.ok(limit < 5000, `the misses in flight shared from, as the metrics show: ${limit} (5,000 while the upstream keeps up)`);
});
