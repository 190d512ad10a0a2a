// node-cache's fair shares, in the zone engine it runs (on loopback, a real dnsmasq upstream): one
// pod (127.0.0.66, dnsperf) floods new names, each a miss forwarded upstream, while another
// (127.0.0.2, dig) asks names the upstream has and does not. With the busy threshold low enough for
// this machine's flood to reach it, the flooder is limited and let go after, the other answered.

import t from 'tap';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { askFrom, floodNames } from '../helpers/flood.ts';
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
