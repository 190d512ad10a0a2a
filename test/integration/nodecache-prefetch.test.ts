// node-cache's Corefile `cache { prefetch }`: a name asked often enough is asked upstream again before
// its TTL runs out, so it keeps answering past its first lifetime even once the upstream falls silent;
// a name asked once is not. The zone engine node-cache runs, on loopback, a real dnsmasq upstream
// (SIGSTOP: silent), dig.

import t from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { freePort } from '../helpers/ports.ts';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { ZoneEngine } from '../../pkg/nodecache/engine.ts';
import { planCorefile } from '../../pkg/nodecache/plan.ts';
import { RequestMetrics } from '../../pkg/nodecache/request-metrics.ts';
import { Registry } from '../../pkg/metrics/registry.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('prefetch 2 1m 50%: a name asked twice in the second half of its TTL answers on past it with the upstream silent; one asked once expires', async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.9 popular.example.com', '192.0.2.10 rare.example.com'], ['--local-ttl=4']);
  t.teardown(() => void process.kill(up.pid, 'SIGCONT'));
  const port = await freePort();
  const text = `.:${port} {\n  bind 127.0.0.1\n  cache 30 {\n    success 9984 30 0\n    prefetch 2 1m 50%\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`;
  const registry = new Registry();
  const engine = new ZoneEngine(planCorefile(parseCorefile(text), { defaultPort: port }), createLogger('test/node-cache'), { metrics: new RequestMetrics(registry) });
  await engine.start();
  t.teardown(() => engine.stop());
  for (const name of ['popular.example.com', 'rare.example.com']) t.equal((await dig(port, name)).answer[0]?.ttl, 4, `${name}: the upstream's TTL`);
  await sleep(2200);
  await dig(port, 'popular.example.com');
  await dig(port, 'popular.example.com');
  await dig(port, 'rare.example.com');
  await sleep(300);
  const series = (name: string, type: string) => new RegExp(`^${name}\\{server="dns://127\\.0\\.0\\.1:${port}",type="${type}",zones="\\.",view=""\\} (\\d+)$`, 'm');
  const scraped = await registry.metrics();
  t.same([scraped.match(series('coredns_cache_entries', 'success'))?.[1], scraped.match(series('coredns_cache_entries', 'denial'))?.[1]], ['2', '0'], 'coredns_cache_entries: the two names, by type');
  t.match(scraped, series('coredns_cache_evictions_total', 'success'), 'coredns_cache_evictions_total exported');
  t.match(await registry.metrics(), new RegExp(`^coredns_cache_prefetch_total\\{server="dns://127\\.0\\.0\\.1:${port}",zones="\\.",view=""\\} 1$`, 'm'), 'one prefetch (the popular name), in coredns_cache_prefetch_total');
  process.kill(up.pid, 'SIGSTOP');
  await sleep(2500);
  const popular = await dig(port, 'popular.example.com');
  t.same(answers(popular), ['192.0.2.9'], 'past its first TTL, the upstream silent: the prefetched answer');
  t.ok(popular.answer[0].ttl >= 1 && popular.answer[0].ttl <= 2, `with what its prefetched TTL has left (${popular.answer[0].ttl})`);
  t.equal((await dig(port, 'rare.example.com', 'A', ['+tries=1', '+timeout=3'])).status, 'SERVFAIL', 'the name asked once expired: asked of the silent upstream');
});
