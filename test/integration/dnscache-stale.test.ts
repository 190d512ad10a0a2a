// dnscache --use-stale-cache (serve-stale, RFC 8767): with its upstream gone, a name asked before keeps
// answering past its TTL (with TTL 30), a name never asked fails at once (SERVFAIL, not a client
// timeout), and the upstream's answers are used again once it is back. Real dnsmasq upstream, the
// real program, dig.

import t from 'tap';
import type { Test } from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { startProgram } from '../helpers/process.ts';
import { makeAnswer } from '../helpers/packets.ts';
import { udpUpstream } from '../helpers/upstreams.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function dnscache(t: Test, upstream: number, args: string[]): Promise<number> {
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', `--server=127.0.0.1#${upstream}`, ...args]);
  return Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
}

/** dig, and how long it took. */
async function timedDig(port: number, name: string): Promise<{ status: string; addresses: string[]; ttls: number[]; ms: number }> {
  const started = Date.now();
  const r = await dig(port, name);
  return { status: r.status, addresses: answers(r, 'A'), ttls: r.answer.map((a) => a.ttl), ms: Date.now() - started };
}

t.test('the upstream gone: stale answers for names asked before, SERVFAIL at once for the rest', async (t) => {
  const upstream = await startDnsmasq(t, ['192.0.2.9 old.example.com'], ['--local-ttl=1']);
  const stale = await dnscache(t, upstream.port, ['--use-stale-cache=60']);
  const shortStale = await dnscache(t, upstream.port, ['--use-stale-cache=1']);
  const plain = await dnscache(t, upstream.port, []);
  for (const port of [stale, shortStale, plain]) t.same((await timedDig(port, 'old.example.com')).addresses, ['192.0.2.9'], 'answered while the upstream runs');

  process.kill(upstream.pid, 'SIGTERM');
  await sleep(1500); // past the 1 s TTL: every cache's entry has expired

  const r = await timedDig(stale, 'old.example.com');
  t.same([r.status, r.addresses, r.ttls], ['NOERROR', ['192.0.2.9'], [30]], 'stale, with TTL 30');
  t.ok(r.ms < 1000, `answered in ${r.ms} ms`);
  const never = await timedDig(stale, 'never.example.com');
  t.equal(never.status, 'SERVFAIL', 'a name never asked');
  t.ok(never.ms < 1000, `failed in ${never.ms} ms, not at a client timeout`);
  t.equal((await timedDig(plain, 'old.example.com')).status, 'SERVFAIL', 'without --use-stale-cache');
  await sleep(1000); // 2.5 s since it was kept: past 1 s TTL + 1 s of staleness
  t.equal((await timedDig(shortStale, 'old.example.com')).status, 'SERVFAIL', 'not past --use-stale-cache=1');
});

t.test('an upstream that stops answering, then answers again: stale meanwhile, its fresh answer after', async (t) => {
  let address: string | null = '192.0.2.9';
  const upstream = await udpUpstream(t, (msg, _rinfo, send) => {
    if (address !== null) send(makeAnswer(msg, { addresses: [address], ttl: 1 }));
  });
  const port = await dnscache(t, upstream.port, ['--use-stale-cache=60']);
  t.same((await timedDig(port, 'moved.example.com')).addresses, ['192.0.2.9']);
  address = null;
  await sleep(1500);
  const r = await timedDig(port, 'moved.example.com');
  t.same([r.addresses, r.ttls], [['192.0.2.9'], [30]], "stale once the forwarder's 2 s try has timed out");
  address = '192.0.2.10';
  const fresh = await timedDig(port, 'moved.example.com');
  t.same([fresh.addresses, fresh.ttls], [['192.0.2.10'], [1]], 'the upstream answers again: its answer, fresh');
});
