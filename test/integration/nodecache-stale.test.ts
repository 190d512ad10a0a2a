// node-cache's Corefile `serve_stale` (CoreDNS's immediate mode, unsaid): with its upstream silent, a
// name kept before is answered at once past its TTL (TTL 30), one refresh sent behind it; once the
// upstream answers again the refreshed answer is served. The zone engine node-cache runs, on loopback,
// a real dnsmasq upstream (SIGSTOP: silent), dig.

import t from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/ports.ts';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { ZoneEngine } from '../../pkg/nodecache/engine.ts';
import { planCorefile } from '../../pkg/nodecache/plan.ts';

t.test("serve_stale unsaid (immediate): an expired answer at once while the upstream is silent, the refreshed one after", async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.9 kept.example.com'], ['--local-ttl=1']);
  t.teardown(() => void process.kill(up.pid, 'SIGCONT'));
  const port = await freePort();
  const text = `.:${port} {\n  bind 127.0.0.1\n  cache 30 {\n    success 9984 30 0\n    serve_stale 1h\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`;
  const engine = new ZoneEngine(planCorefile(parseCorefile(text), { defaultPort: port }), createLogger('test/node-cache'));
  await engine.start();
  t.teardown(() => engine.stop());
  t.equal((await dig(port, 'kept.example.com')).answer[0]?.ttl, 1, "fresh: the upstream's TTL");

  process.kill(up.pid, 'SIGSTOP');
  await new Promise((r) => setTimeout(r, 1500));
  const started = Date.now();
  const stale = await dig(port, 'kept.example.com');
  const ms = Date.now() - started;
  t.same([answers(stale), stale.answer[0]?.ttl], [['192.0.2.9'], 30], 'expired: the stale answer with TTL 30');
  t.ok(ms < 1000, `answered at once (${ms} ms), not after the forwarder's timeout`);
  t.equal((await dig(port, 'never.example.com')).status, 'SERVFAIL', 'a name never kept fails');
  t.equal(engine.zones[0].handler.stats.stale, 1, 'one stale answer counted');

  process.kill(up.pid, 'SIGCONT');
  await eventually(async () => ((await dig(port, 'kept.example.com')).answer[0]?.ttl ?? 30) <= 1, 'the refreshed answer (TTL 1) served once the upstream answers', 8000);
  t.pass('refreshed behind the stale answers');
});

t.test("serve_stale verify, the pods' addresses passed to the upstream (as to the cluster DNS): a kept name answered stale once the upstream fails", async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.9 kept.example.com'], ['--local-ttl=1']);
  t.teardown(() => void process.kill(up.pid, 'SIGCONT'));
  const port = await freePort();
  const text = `.:${port} {\n  bind 127.0.0.1\n  cache 30 {\n    success 9984 30 0\n    serve_stale 1h verify\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`;
  const engine = new ZoneEngine(planCorefile(parseCorefile(text), { defaultPort: port }), createLogger('test/node-cache'), { askersTo: '127.0.0.1' });
  await engine.start();
  t.teardown(() => engine.stop());
  t.same(answers(await dig(port, 'kept.example.com', 'A', ['-b', '127.0.0.41'])), ['192.0.2.9'], 'fresh, asked with the pod address');
  process.kill(up.pid, 'SIGSTOP');
  await new Promise((r) => setTimeout(r, 1500));
  const stale = await dig(port, 'kept.example.com', 'A', ['-b', '127.0.0.42', '+time=5']);
  t.same([answers(stale), stale.answer[0]?.ttl], [['192.0.2.9'], 30], "another pod, the upstream silent: the first pod's answer, stale (it held for every asker)");
  t.equal(engine.zones[0].handler.stats.stale, 1);
});
