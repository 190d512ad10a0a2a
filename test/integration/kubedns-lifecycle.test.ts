// kube-dns as an operator meets it: readiness before and after the first sync, live edits of the
// cluster file, a broken file, dead upstreams, bad flags, metrics, and a clean SIGTERM.

import t from 'tap';
import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dig, answers } from '../helpers/dig.ts';
import type { DigResult } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startKubeDns, yamlDocs, service } from '../helpers/kubedns.ts';
import { freePort } from '../helpers/ports.ts';
import { repoRoot } from '../helpers/process.ts';

const run = promisify(execFile);
const one = (ip: string) => yamlDocs(service('default', 'web', `clusterIP: ${ip}\nports:\n- {name: http, port: 80}`));

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/** Asks for the web service until the reply satisfies `ok`, and returns that reply. */
function webUntil(port: number, ok: (r: DigResult) => boolean, what: string): Promise<DigResult> {
  return eventually(async () => {
    const r = await dig(port, 'web.default.svc.cluster.local');
    return ok(r) && r;
  }, what, 3000);
}

t.test('before the first sync: SERVFAIL for the zone, readiness 503; a file that appears later is loaded', async (t) => {
  const laterDir = mkdtempSync(join(tmpdir(), 'kdt-later-'));
  t.teardown(() => rmSync(laterDir, { recursive: true, force: true }));
  const later = join(laterDir, 'later.yaml');
  const waiting = await startKubeDns(t, { clusterYaml: '', synced: false, args: [`--cluster-file=${later}`] });
  t.equal((await dig(waiting.dnsPort, 'web.default.svc.cluster.local')).status, 'SERVFAIL', 'never a false NXDOMAIN');
  t.equal((await get(waiting.httpPort, '/readiness')).status, 503);
  t.equal((await get(waiting.httpPort, '/healthz')).status, 200);
  writeFileSync(later, one('10.96.0.5'));
  await waiting.program.waitFor(/initial sync done/);
  t.equal((await get(waiting.httpPort, '/readiness')).body, 'ok\n');
  t.same(answers(await dig(waiting.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.5']);
});

t.test('edits are served within a second; a broken file keeps the last good state', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: one('10.96.0.5') });
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.5']);
  const before = Date.now();
  writeFileSync(kd.clusterFile, one('10.96.0.6'));
  const changed = await webUntil(kd.dnsPort, (r) => answers(r)[0] === '10.96.0.6', 'the edit is served');
  t.same(answers(changed), ['10.96.0.6']);
  t.ok(Date.now() - before < 1500, 'seen within about a second');
  // Editors write a new file and rename it over the old one.
  writeFileSync(join(kd.dir, 'new.yaml'), one('10.96.0.7'));
  renameSync(join(kd.dir, 'new.yaml'), kd.clusterFile);
  t.same(answers(await webUntil(kd.dnsPort, (r) => answers(r)[0] === '10.96.0.7', 'the renamed file is served')), ['10.96.0.7']);
  writeFileSync(kd.clusterFile, 'kind: Service\nmetadata: [unclosed\n');
  await kd.program.waitFor(/line[= ]\d+/);
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.7'], 'last good state kept');
  t.equal((await get(kd.httpPort, '/readiness')).status, 200);
  unlinkSync(kd.clusterFile);
  writeFileSync(kd.clusterFile, yamlDocs(service('default', 'other', 'clusterIP: 10.96.0.9')));
  t.equal((await webUntil(kd.dnsPort, (r) => r.status === 'NXDOMAIN', 'the deleted service is gone')).status, 'NXDOMAIN', 'deleted service gone');
});

t.test('every upstream down: SERVFAIL, not silence', async (t) => {
  const dead = await freePort();
  const kd = await startKubeDns(t, { clusterYaml: one('10.96.0.5'), args: [`--nameservers=127.0.0.1:${dead}`] });
  const r = await dig(kd.dnsPort, 'www.example.com', 'A', ['+time=8']);
  t.equal(r.status, 'SERVFAIL');
});

t.test('HTTP endpoints: /cache in the original shape, /metrics with our and the original names', async (t) => {
  const promPort = await freePort();
  const kd = { ...(await startKubeDns(t, { clusterYaml: one('10.96.0.5'), env: { PROMETHEUS_PORT: String(promPort) } })), promPort };
  await dig(kd.dnsPort, 'web.default.svc.cluster.local');
  const cache = JSON.parse((await get(kd.httpPort, '/cache')).body);
  const web = cache.ChildNodes.local.ChildNodes.cluster.ChildNodes.svc.ChildNodes.default.ChildNodes.web;
  t.ok(Object.values(web.Entries).some((e) => (e as { host: string }).host === '10.96.0.5'));
  const metrics = (await get(kd.httpPort, '/metrics')).body;
  t.match(metrics, /kubedns_dns_responses_total\{type="A",rcode="NOERROR",proto="udp"\} 1/);
  t.match(metrics, /skydns_skydns_dns_request_count_total\{system="auth"\} 1/);
  t.match(metrics, /kubedns_synced 1/);
  t.match(metrics, /process_resident_memory_bytes/);
  const extra = await get(Number(kd.promPort), '/metrics');
  t.match(extra.body, /kubedns_synced 1/, 'also on PROMETHEUS_PORT, as the original manifest scrapes');
});

t.test('skydns_skydns_dns_request_count_total: an answer from the cache counts under the system it was first counted under', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: one('10.96.0.5') });
  // One client (one source port): with --workers too, its questions reach one thread's cache.
  const from = ['-b', `127.0.0.1#${await freePort()}`];
  for (let i = 0; i < 3; i++) {
    t.equal((await dig(kd.dnsPort, 'version.bind', 'TXT', ['-c', 'CH', ...from])).status, 'NOERROR');
    t.equal((await dig(kd.dnsPort, 'nothing.bind', 'TXT', ['-c', 'CH', ...from])).status, 'REFUSED');
    t.equal((await dig(kd.dnsPort, '5.0.96.10.in-addr.arpa', 'PTR', from)).status, 'NOERROR');
  }
  const metrics = (await get(kd.httpPort, '/metrics')).body;
  t.match(metrics, /kubedns_dns_answer_cache_hits_total 6/, 'two of each three from the cache');
  t.match(metrics, /skydns_skydns_dns_request_count_total\{system="chaos"\} 3/);
  t.match(metrics, /skydns_skydns_dns_request_count_total\{system="refused"\} 3/);
  t.match(metrics, /skydns_skydns_dns_request_count_total\{system="reverse"\} 3/);
  t.notMatch(metrics, /skydns_skydns_dns_request_count_total\{system="auth"\}/, 'none of them auth');
});

t.test('the original SkyDNS metrics: every name, type, label set and bucket, fed by cache hits too', async (t) => {
  const dead = await freePort();
  const kd = await startKubeDns(t, { clusterYaml: one('10.96.0.5'), args: [`--nameservers=127.0.0.1:${dead}`] });
  for (let i = 0; i < 2; i++) {
    await dig(kd.dnsPort, 'web.default.svc.cluster.local');
    await dig(kd.dnsPort, 'nothing.default.svc.cluster.local');
    await dig(kd.dnsPort, '5.0.96.10.in-addr.arpa', 'PTR');
  }
  t.equal((await dig(kd.dnsPort, 'www.example.com', 'A', ['+time=8'])).status, 'SERVFAIL');
  const m = (await get(kd.httpPort, '/metrics')).body;
  const series = (name: string) => m.split('\n').filter((l) => l.startsWith(name));
  for (const [name, type] of [
    ['skydns_skydns_dns_request_count_total', 'counter'],
    ['skydns_skydns_dns_request_duration_seconds', 'histogram'],
    ['skydns_skydns_dns_response_size_bytes', 'histogram'],
    ['skydns_skydns_dns_error_count_total', 'counter'],
    ['skydns_skydns_dns_cachemiss_count_total', 'counter'],
  ]) t.match(m, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `${name} is a ${type}`);
  const les = (name: string) => series(`${name}_bucket{system="auth"`).map((l) => /le="([^"]+)"/.exec(l)![1]);
  t.same(les('skydns_skydns_dns_request_duration_seconds'), ['0.001', '0.003', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'], 'SkyDNS duration buckets');
  t.same(les('skydns_skydns_dns_response_size_bytes'), ['0', '512', '1024', '1500', '2048', '4096', '8192', '12288', '16384', '20480', '24576', '28672', '32768', '36864', '40960', '45056', '49152', '53248', '57344', '61440', '65536', '+Inf'], 'SkyDNS size buckets');
  t.match(m, /^skydns_skydns_dns_request_count_total\{system="auth"\} 4$/m, 'auth: two answers, two NXDOMAINs, hits included');
  t.match(m, /^skydns_skydns_dns_request_count_total\{system="reverse"\} 2$/m);
  t.match(m, /^skydns_skydns_dns_request_count_total\{system="recursive"\} 1$/m);
  t.match(m, /^skydns_skydns_dns_request_duration_seconds_count\{system="auth"\} 4$/m);
  t.match(m, /^skydns_skydns_dns_response_size_bytes_count\{system="reverse"\} 2$/m);
  t.match(m, /^skydns_skydns_dns_error_count_total\{system="auth",cause="nxdomain"\} 2$/m);
  t.match(m, /^skydns_skydns_dns_error_count_total\{system="recursive",cause="servfail"\} 1$/m);
  t.match(m, /^skydns_skydns_dns_cachemiss_count_total\{cache="response"\} [1-9]/m);
});

t.test('a change drops only the answers it touched: the rest stay cached, the touched ones are fresh', async (t) => {
  const cluster = (db: string, extra = '') =>
    yamlDocs(service('default', 'web', 'clusterIP: 10.96.0.5'), service('default', 'db', `clusterIP: ${db}`), ...(extra ? [service('default', 'new', `clusterIP: ${extra}`)] : []));
  const kd = await startKubeDns(t, { clusterYaml: cluster('10.96.0.6') });
  const hits = async () => Number(/^kubedns_dns_answer_cache_hits_total (\d+)/m.exec((await get(kd.httpPort, '/metrics')).body)![1]);
  const ask = async (name: string, type = 'A') => answers(await dig(kd.dnsPort, name, type));
  const serial = async () => (await dig(kd.dnsPort, 'cluster.local', 'SOA')).answer[0].data.split(' ')[2];
  const before = await serial();
  for (let i = 0; i < 2; i++) {
    t.same(await ask('web.default.svc.cluster.local'), ['10.96.0.5']);
    t.same(await ask('db.default.svc.cluster.local'), ['10.96.0.6']);
    t.same(await ask('6.0.96.10.in-addr.arpa', 'PTR'), ['db.default.svc.cluster.local.']);
    t.equal((await dig(kd.dnsPort, 'new.default.svc.cluster.local')).status, 'NXDOMAIN');
  }

  // With threads (npm run test:threads) each has its own cache and the kernel picks one per asker's
  // port: asked enough that every thread holds web (one left out: 2^-15 at two threads).
  for (let i = 0; i < 16; i++) await ask('web.default.svc.cluster.local');
  unlinkSync(kd.clusterFile);
  writeFileSync(kd.clusterFile, cluster('10.96.0.7', '10.96.0.8'));
  await eventually(async () => (await ask('db.default.svc.cluster.local')).join() === '10.96.0.7', 'the changed service, fresh', 3000);
  const hitsBefore = await hits();
  t.same(await ask('web.default.svc.cluster.local'), ['10.96.0.5']);
  t.equal(await hits(), hitsBefore + 1, 'the untouched service is still answered from the cache');
  t.same(await ask('7.0.96.10.in-addr.arpa', 'PTR'), ['db.default.svc.cluster.local.'], 'the new address\'s PTR');
  t.not((await dig(kd.dnsPort, '6.0.96.10.in-addr.arpa', 'PTR')).answer.length, 1, 'the old address\'s PTR is gone');
  t.same(await ask('new.default.svc.cluster.local'), ['10.96.0.8'], 'a name that was NXDOMAIN now answers');
  t.not(await serial(), before, 'the SOA carries the new serial');
});

t.test('flags: unknown flag or bad value exits 2 naming it; --help; --version', async (t) => {
  const main = join(repoRoot, 'cmd/kube-dns/main.ts');
  for (const [args, re] of [[['--no-such-flag'], /no-such-flag/], [['--dns-port=notanumber'], /dns-port/], [['--ttl', '99999'], /ttl/], [['--config-dir=/x', '--config-map=y'], /cannot be used together/]] as const) {
    const err = await run(process.execPath, [main, ...args]).then(() => null, (e) => e);
    t.equal(err?.code, 2, `${args.join(' ')} exits 2`);
    t.match(err?.stderr, re);
  }
  const help = await run(process.execPath, [main, '--help']);
  for (const f of ['--domain', '--dns-port', '--healthz-port', '--config-dir', '--cluster-file', '--pod-records']) t.match(help.stdout, f);
  t.match((await run(process.execPath, [main, '--version'])).stdout, /^Kube-DNS \d/);
  t.match((await run(process.execPath, [main, '-v=2', '--version=raw'])).stdout, /^"\d/);
});

t.test('SIGTERM: exits 0', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: one('10.96.0.5') });
  t.equal(await kd.program.stop('SIGTERM'), 0);
});
