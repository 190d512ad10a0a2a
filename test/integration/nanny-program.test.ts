// The dnsmasq-nanny program itself: flags, -restartDnsmasq=false, -logInterval, the HTTP endpoints,
// and the crash loop that ends it with status 1.

import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { startNanny } from '../helpers/nanny.ts';
import { WITHIN_SYNC } from '../helpers/nanny-scenarios.ts';
import { startProgram } from '../helpers/process.ts';
import { udpClient } from '../helpers/clients.ts';
import { makeQuery } from '../helpers/packets.ts';
import { blackhole } from '../helpers/upstreams.ts';

t.test('bad flags: exit 2 naming the flag', async (t) => {
  const cases = [
    ['-syncInterval=10', /syncInterval/],
    ['-kubednsServer=kube-dns:53', /kubednsServer.*not an IP address/],
    ['-metricsAddress=10056', /metricsAddress/],
    ['-restartDnsmasq=maybe', /restartDnsmasq/],
    ['-noSuchFlag', /noSuchFlag/],
  ] as const;
  const runs = cases.map(([arg]) => startProgram(t, 'dnsmasq-nanny', [arg]));
  const codes = await Promise.all(runs.map((p) => p.exited));
  cases.forEach(([arg, message], i) => {
    t.equal(codes[i], 2, arg);
    t.match(runs[i].output(), message, arg);
  });
});

t.test('--help lists the original flags', async (t) => {
  const p = startProgram(t, 'dnsmasq-nanny', ['--help']);
  t.equal(await p.exited, 0);
  for (const flag of ['dnsmasqExec', 'restartDnsmasq', 'configDir', 'syncInterval', 'kubednsServer', 'logInterval', 'metricsAddress']) t.match(p.output(), flag);
});

t.test('/healthz, and every metric exported from the start', async (t) => {
  const n = await startNanny(t);
  const health = await fetch(`http://127.0.0.1:${n.metricsPort}/healthz`);
  t.equal(health.status, 200);
  t.equal(await health.text(), 'ok\n');
  t.equal((await fetch(`http://127.0.0.1:${n.metricsPort}/nothing`)).status, 404);
  t.equal((await fetch(`http://127.0.0.1:${n.metricsPort}/metrics`, { method: 'POST' })).status, 405);
  for (const series of [
    'dnsmasq_nanny_config_updates_total',
    'dnsmasq_nanny_config_invalid_total',
    'dnsmasq_nanny_child_reloads_total',
    'dnsmasq_nanny_child_restarts_total{reason="config"}',
    'dnsmasq_nanny_child_restarts_total{reason="exit"}',
    'dnsmasq_nanny_stub_resolution_failures_total',
  ]) {
    t.equal(await n.metric(series), 0, series);
  }
  t.equal(await n.metric('dnsmasq_nanny_child_up'), 1);
});

t.test('-metricsAddress= (empty): no HTTP endpoint', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-nanny-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const p = startProgram(t, 'dnsmasq-nanny', [`-configDir=${dir}`, '-metricsAddress=', '--', '-k', '--port=0', '--listen-address=127.0.0.1', `--resolv-file=${join(dir, 'none')}`]);
  await p.waitFor(/dnscache: .*listening/);
  t.notMatch(p.output(), /metrics listening/);
  t.equal(await p.stop(), 0);
});

// With real dnsmasq: our dnscache never needs a restart (no-resolv comes in its servers-file).
t.test('-restartDnsmasq=false: a needed restart is logged, not done; the servers still change by SIGHUP', async (t) => {
  const u = await startDnsmasq(t, ['192.0.2.1 www.example.com']);
  const n = await startNanny(t, { child: 'dnsmasq', flags: ['-restartDnsmasq=false'] });
  n.writeConfig({ upstreamNameservers: JSON.stringify([`127.0.0.1:${u.port}`]) });
  await n.program.waitFor(/the child needs a restart for its new command line, but -restartDnsmasq=false: keeping it running args=.*--no-resolv/, WITHIN_SYNC + 1000);
  await eventually(async () => answers(await dig(n.dnsPort, 'www.example.com')).join() === '192.0.2.1', 'the new upstream, from the servers-file', WITHIN_SYNC);
  t.equal(n.childPids().length, 1, 'no restart');
  t.equal(await n.metric('dnsmasq_nanny_child_restarts_total{reason="config"}'), 0);
  t.equal(await n.metric('dnsmasq_nanny_child_reloads_total'), 1);
});

t.test('-logInterval: SIGUSR1 to the child, whose statistics come out prefixed', async (t) => {
  const n = await startNanny(t, { flags: ['-logInterval=300ms'] });
  await eventually(() => (n.program.output().match(/^\S+ I dnscache: statistics /gm) ?? []).length >= 2, 'two statistics lines', 3000);
  t.equal(n.childPids().length, 1, 'SIGUSR1 does not hurt the child');
});

t.test('a child that cannot run: started again with backoff, then the nanny exits 1', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-nanny-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const p = startProgram(t, 'dnsmasq-nanny', [`-configDir=${dir}`, '-metricsAddress=127.0.0.1:0', '-dnsmasqExec=/nonexistent/dnsmasq', '--', '-k']);
  // Backoff 1 + 2 + 4 + 8 s between the five failed starts.
  t.equal(await p.exited, 1);
  t.equal((p.output().match(/child exited unexpectedly how="could not start: spawn \/nonexistent\/dnsmasq ENOENT"/g) ?? []).length, 5);
  t.match(p.output(), /E dnsmasq-nanny: the child keeps failing, giving up reason="the child failed 5 times within 120s/);
});

t.test('SIGTERM while queries wait on an upstream that never answers: dnscache drains within its grace, the nanny exits 0', async (t) => {
  // As when the whole pod stops at once: dnscache's forwards to kube-dns find nobody there.
  const silent = await blackhole(t);
  const n = await startNanny(t, { childArgs: [`--server=127.0.0.1#${silent.port}`] });
  const client = await udpClient(t);
  const asking = setInterval(() => client.send(makeQuery(`q${silent.ids.length}.example.org`, silent.ids.length & 0xffff), n.dnsPort), 50);
  t.teardown(() => clearInterval(asking));
  await eventually(() => silent.ids.length >= 3, 'forwards in flight', 3000);
  t.equal(await n.program.stop(), 0);
  t.notMatch(n.program.output(), /did not stop after SIGTERM/, 'nothing killed');
  t.match(n.program.output(), /dnscache: child stopped pid=\d+ how="exit code 0"/);
});
