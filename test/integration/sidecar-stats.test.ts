// kubedns_dnsmasq_* from real forwarders: our dnscache and, separately, real dnsmasq, both forwarding
// to a real kube-dns. Questions sent with dig (N misses, M hits) must move the counters by exactly
// that; a restarted forwarder's counts are added, not lost; an unreachable one counts errors.

import t from 'tap';
import type { Test } from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { service, startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import { freePort } from '../helpers/ports.ts';
import { startProgram } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';
import { sample, scrape, startSidecar } from '../helpers/sidecar.ts';

const N = 5; // distinct names: misses (and insertions)
const M = 7; // repeats of them: hits
const names = Array.from({ length: N }, (_, i) => `web${i}.default.svc.cluster.local`);
const cluster = yamlDocs(...names.map((_, i) => service('default', `web${i}`, `clusterIP: 10.96.1.${i + 1}`)));
const POLL = '--dnsmasq-poll-interval-ms=100';

async function dnscache(t: Test, upstreamPort: number, port = 0): Promise<{ p: Program; port: number }> {
  const p = startProgram(t, 'dnscache', ['-k', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--log-facility=-', '--cache-size=1000', `--server=127.0.0.1#${upstreamPort}`]);
  const m = await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/);
  return { p, port: Number(m[1]) };
}

/** N first-time questions (misses), then M repeats (hits), each answered with its service's address. */
async function missesThenHits(t: Test, port: number): Promise<void> {
  for (const [i, name] of names.entries()) t.same(answers(await dig(port, name)), [`10.96.1.${i + 1}`], name);
  for (let j = 0; j < M; j++) t.same(answers(await dig(port, names[j % N])), [`10.96.1.${(j % N) + 1}`]);
}

type Samples = Map<string, number>;
const value = (m: Samples, name: string) => sample(m, `kubedns_dnsmasq_${name}`);

/** Scrapes until `ok` holds; the last scrape is in the failure message when it never does. */
async function metricsWhen(port: number, ok: (m: Samples) => boolean, what: string): Promise<Samples> {
  let last: Samples = new Map();
  try {
    return await eventually(async () => {
      last = await scrape(port);
      return ok(last) && last;
    }, what);
  } catch (err) {
    const shown = [...last].filter(([k]) => k.startsWith('kubedns_dnsmasq_')).map(([k, v]) => `${k}=${v}`).join(' ');
    throw new Error(`${(err as Error).message}; last scrape: ${shown}`);
  }
}

t.test('dnscache: N misses and M hits move the counters by N and M', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  const dc = await dnscache(t, kd.dnsPort);
  const sc = await startSidecar(t, [`--dnsmasq-port=${dc.port}`, POLL]);
  const before = await metricsWhen(sc.port, (m) => value(m, 'polls_total') >= 1, 'a first round');
  t.equal(value(before, 'max_size'), 1000, 'max_size: cachesize.bind');
  t.equal(value(before, 'cache_size'), 1000);

  await missesThenHits(t, dc.port);
  const after = await metricsWhen(
    sc.port,
    (m) => value(m, 'misses') === value(before, 'misses') + N && value(m, 'hits') === value(before, 'hits') + M && value(m, 'insertions') === value(before, 'insertions') + N,
    `misses +${N}, hits +${M}, insertions +${N}`,
  );
  t.equal(value(after, 'evictions'), value(before, 'evictions'));
  t.equal(value(after, 'max_size'), 1000, 'unchanged');
  t.equal(value(after, 'errors'), 0);
  t.equal(value(after, 'restarts_total'), 0);
});

t.test('real dnsmasq: the same counts (dnsmasq also counts each statistics question as a hit)', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  const dm = await startDnsmasq(t, [], [`--server=127.0.0.1#${kd.dnsPort}`, '--cache-size=1000']);
  const sc = await startSidecar(t, [`--dnsmasq-port=${dm.port}`, POLL]);
  // dnsmasq answers the five *.bind questions itself and counts them in hits.bind. Round k reads
  // hits.bind first, when the 5 × (k − 1) questions of the earlier rounds have been counted; nothing
  // else asks this dnsmasq. So the hits that came from dig are hits − 5 × (polls − 1).
  const digHits = (m: Samples) => value(m, 'hits') - 5 * (value(m, 'polls_total') - 1);
  const before = await metricsWhen(sc.port, (m) => value(m, 'polls_total') >= 1, 'a first round');
  t.equal(digHits(before), 0);
  t.equal(value(before, 'misses'), 0);
  t.equal(value(before, 'max_size'), 1000);

  await missesThenHits(t, dm.port);
  const after = await metricsWhen(sc.port, (m) => value(m, 'misses') === N && digHits(m) === M && value(m, 'insertions') === N, `misses ${N}, hits from dig ${M}, insertions ${N}`);
  t.equal(value(after, 'evictions'), 0);
  t.equal(value(after, 'errors'), 0);
});

t.test('a restarted forwarder (its counts start again from 0): its new counts are added', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  const port = await freePort();
  const first = await dnscache(t, kd.dnsPort, port);
  const sc = await startSidecar(t, [`--dnsmasq-port=${port}`, POLL]);
  await missesThenHits(t, port);
  await metricsWhen(sc.port, (m) => value(m, 'misses') === N && value(m, 'hits') === M, 'the first process\'s counts');

  t.equal(await first.p.stop(), 0);
  // The sidecar sees it gone (a failed round), then is paused while the new process starts and counts
  // K misses: its first reading of the new process is K, below the N it last saw. (The original would
  // add nothing for that reading.)
  const errors = value(await scrape(sc.port), 'errors');
  await metricsWhen(sc.port, (m) => value(m, 'errors') > errors, 'a failed round while no forwarder runs');
  const K = 2;
  sc.program.child.kill('SIGSTOP');
  try {
    await dnscache(t, kd.dnsPort, port);
    for (const name of names.slice(0, K)) t.same((await dig(port, name)).status, 'NOERROR'); // misses again: a fresh cache
  } finally {
    sc.program.child.kill('SIGCONT');
  }
  const after = await metricsWhen(sc.port, (m) => value(m, 'misses') === N + K && value(m, 'insertions') === N + K, `misses ${N} + ${K}`);
  t.equal(value(after, 'hits'), M, 'no hits since the restart');
  t.equal(value(after, 'restarts_total'), 1, 'the restart seen once');
  t.match(sc.program.output(), /I sidecar\/stats: the statistics went down: the forwarder restarted, counting again from 0/);
});

t.test('no forwarder: each failed round counts an error, no counts, one warning', async (t) => {
  const sc = await startSidecar(t, [`--dnsmasq-port=${await freePort()}`, POLL]);
  const m = await metricsWhen(sc.port, (m) => value(m, 'errors') >= 3, 'three failed rounds');
  t.equal(value(m, 'polls_total'), 0);
  t.equal(value(m, 'hits'), 0);
  t.equal(value(m, 'max_size'), 0);
  t.equal((sc.program.output().match(/W sidecar\/stats: cannot read statistics from the forwarder err="udp 127\.0\.0\.1:\d+: connection refused"/g) ?? []).length, 1);
});
