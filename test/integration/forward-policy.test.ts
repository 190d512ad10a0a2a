// Forwarder's policy and health checks (CoreDNS forward's policy, max_fails, health_check) against
// real dnsmasq upstreams on 127.0.0.1; an upstream gone silent is a dnsmasq stopped with SIGSTOP.

import t from 'tap';
import type { Test } from 'tap';
import { performance } from 'node:perf_hooks';
import { Forwarder } from '../../pkg/forward/forward.ts';
import type { ForwarderOptions, Upstream } from '../../pkg/forward/forward.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { makeQuery, readAnswer } from '../helpers/packets.ts';

async function upstreams(t: Test, n: number): Promise<(Upstream & { pid: number })[]> {
  const out = [];
  for (let i = 1; i <= n; i++) {
    const d = await startDnsmasq(t, [`192.0.2.${i} www.example.org`]);
    out.push({ host: '127.0.0.1', port: d.port, pid: d.pid });
  }
  return out;
}

function forwarder(t: Test, o: ForwarderOptions, servers: Upstream[]): Forwarder {
  const f = new Forwarder({ timeoutMs: 300, ...o });
  t.teardown(() => f.close());
  f.setUpstreams(servers.map(({ host, port }) => ({ host, port })));
  return f;
}

/** The address each of `n` queries was answered with (each dnsmasq answers its own). */
async function answeredBy(f: Forwarder, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(readAnswer(await f.forward(makeQuery('www.example.org', i + 1), 'www.example.org')).addresses[0]);
  return out;
}

const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;

t.test('policy: sequential asks the first, round_robin each in turn, random spreads', async (t) => {
  const servers = await upstreams(t, 3);
  t.same(new Set(await answeredBy(forwarder(t, { policy: 'sequential' }, servers), 9)), new Set(['192.0.2.1']), 'sequential: the first');
  const rr = await answeredBy(forwarder(t, { policy: 'round_robin' }, servers), 9);
  t.same([1, 2, 3].map((i) => count(rr, `192.0.2.${i}`)), [3, 3, 3], 'round_robin: three each');
  const random = await answeredBy(forwarder(t, { policy: 'random' }, servers), 90);
  t.ok([1, 2, 3].every((i) => count(random, `192.0.2.${i}`) > 5), `random: each of the three got some of 90 (${[1, 2, 3].map((i) => count(random, `192.0.2.${i}`))})`);
});

t.test('max_fails and health_check: a silent upstream is skipped once down, probed, and used again once it answers', async (t) => {
  const [first, second] = await upstreams(t, 2);
  t.teardown(() => void process.kill(first.pid, 'SIGCONT'));
  const f = forwarder(t, { policy: 'sequential', health: { maxFails: 2, checkMs: 100 } }, [first, second]);
  t.same(await answeredBy(f, 1), ['192.0.2.1']);
  process.kill(first.pid, 'SIGSTOP');
  // Three unanswered tries (more than max_fails) make it down; each costs the try's timeout.
  t.same(await answeredBy(f, 3), ['192.0.2.2', '192.0.2.2', '192.0.2.2'], 'the second answers while the first is silent');
  const triesBefore = f.serverStats()[0].queries;
  const started = performance.now();
  t.same(await answeredBy(f, 5), Array(5).fill('192.0.2.2'));
  t.ok(performance.now() - started < 300, 'down: five queries without waiting on the silent one');
  t.equal(f.serverStats()[0].queries, triesBefore, 'no query went to it');
  await eventually(() => f.replyStats()[0].healthcheckFailures > 0, 'a probe went unanswered (coredns_forward_healthcheck_failures_total)', 3000);
  process.kill(first.pid, 'SIGCONT');
  await eventually(async () => (await answeredBy(f, 1))[0] === '192.0.2.1', 'the first answers again after a probe', 3000);
});

t.test('every upstream down: they are still asked', async (t) => {
  const [only] = await upstreams(t, 1);
  t.teardown(() => void process.kill(only.pid, 'SIGCONT'));
  const f = forwarder(t, { health: { maxFails: 1, checkMs: 50 } }, [only]);
  process.kill(only.pid, 'SIGSTOP');
  for (let i = 0; i < 3; i++) await t.rejects(f.forward(makeQuery('www.example.org', i + 1), 'www.example.org'), { code: 'FORWARD_ALL_FAILED' });
  t.equal(f.serverStats()[0].queries, 3, 'a route whose every server is down still tries them');
  t.ok(f.stats.healthcheckBroken >= 1, 'and counts it (coredns_forward_healthcheck_broken_total)');
});
