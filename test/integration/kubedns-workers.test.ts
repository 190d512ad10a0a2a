// kube-dns --workers=2 as a user sees it: two UDP sockets on the DNS port in one process, every client
// answered whichever thread the kernel gives it, a change of the cluster reaching every thread's
// cache (no thread answers what the change dropped), the metrics one set for the process, and a port
// another server holds refused. Clients on fixed source ports (dig -b) stay on one thread each.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { service, startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import { freePort } from '../helpers/ports.ts';
import { startProgram } from '../helpers/process.ts';
import { scrape, sample } from '../helpers/sidecar.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';

const CLIENTS = 10;
const web = (ip: string) => yamlDocs(service('default', 'web', `clusterIP: ${ip}\nports:\n- {name: http, port: 80}`));
const NAME = 'web.default.svc.cluster.local';

t.test('--workers=2: one process, two sockets; changes reach every thread; one set of metrics', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: web('10.96.0.5'), args: ['--workers=2'] });
  const sockets = execFileSync('ss', ['-Hulnp', `sport = :${kd.dnsPort}`], { encoding: 'utf8' }).split('\n').filter((l) => l.trim() !== '');
  t.equal(sockets.length, 2, 'two UDP sockets on the DNS port');
  t.ok(sockets.every((l) => l.includes(`pid=${kd.program.child.pid},`)), 'both held by the one kube-dns process');
  const froms = await Promise.all(Array.from({ length: CLIENTS }, async () => ['-b', `127.0.0.1#${await freePort()}`]));
  // Twice each: the second from the asking thread's cache.
  for (const from of froms) for (let i = 0; i < 2; i++) t.same(answers(await dig(kd.dnsPort, NAME, 'A', from)), ['10.96.0.5']);
  writeFileSync(kd.clusterFile, web('10.96.0.6'));
  await kd.program.waitFor(/loaded cluster file .*updated=1/);
  for (const from of froms) t.same(answers(await dig(kd.dnsPort, NAME, 'A', from)), ['10.96.0.6'], 'the new address, from every thread');
  const m = await eventually(async () => {
    const s = await scrape(kd.httpPort);
    return sample(s, 'kubedns_dns_responses_total{type="A",rcode="NOERROR",proto="udp"}') === 3 * CLIENTS && s;
  }, 'every reply counted', 3000);
  t.equal(sample(m, 'skydns_skydns_dns_request_count_total{system="auth"}'), 3 * CLIENTS, "SkyDNS's count, every thread's");
  t.equal(sample(m, 'kubedns_dns_request_duration_seconds_count'), 3 * CLIENTS, 'the duration histogram, every thread\'s');
  // A thread's first ask of each version of the name is its miss; every other reply a hit.
  const misses = 3 * CLIENTS - sample(m, 'kubedns_dns_answer_cache_hits_total');
  t.ok(misses >= 2 && misses <= 4, `${misses} misses: one per thread that was asked, per version of the name`);
  kd.program.child.kill('SIGTERM');
  t.equal(await kd.program.exited, 0);
});

t.test('--workers=2: a thread holds every answer --cache-bytes holds, not a share of them (the kernel spreads clients, not names)', async (t) => {
  // 20 answers fit in 16 KiB (about 400 bytes each), not in half of it.
  const names = Array.from({ length: 20 }, (_, i) => `s${i}`);
  const yaml = yamlDocs(...names.map((n, i) => service('default', n, `clusterIP: 10.96.1.${i + 1}\nports:\n- {name: http, port: 80}`)));
  const kd = await startKubeDns(t, { clusterYaml: yaml, args: ['--workers=2', '--cache-bytes=16Ki'] });
  const from = ['-b', `127.0.0.1#${await freePort()}`]; // one client: one thread
  for (let pass = 0; pass < 2; pass++) {
    for (const [i, n] of names.entries()) t.same(answers(await dig(kd.dnsPort, `${n}.default.svc.cluster.local`, 'A', from)), [`10.96.1.${i + 1}`]);
  }
  const m = await scrape(kd.httpPort);
  t.equal(sample(m, 'kubedns_answer_cache_evictions_total'), 0, 'nothing pushed out');
  t.equal(sample(m, 'kubedns_dns_answer_cache_hits_total'), names.length, 'the second pass answered from the thread\'s cache');
  t.equal(sample(m, 'kubedns_answer_cache_max_bytes'), 2 * 16 * 1024, '--cache-bytes for each thread');
});

t.test('--workers=2 on a port another server holds: exit 1 (its SO_REUSEPORT sockets would share it silently)', async (t) => {
  const other = await startDnsmasq(t, []);
  const p = startProgram(t, 'kube-dns', ['--cluster-file=/dev/null', '--dns-bind-address=127.0.0.1', `--dns-port=${other.port}`, '--http-bind-address=127.0.0.1', '--healthz-port=0', '--workers=2']);
  t.equal(await p.exited, 1);
  t.match(p.output(), /EADDRINUSE/);
});

t.test('--workers: 0 or 300 is a usage error', async (t) => {
  for (const bad of ['--workers=0', '--workers=300']) {
    const p = startProgram(t, 'kube-dns', ['--cluster-file=/dev/null', bad]);
    t.equal(await p.exited, 2, bad);
    t.match(p.output(), /workers/);
  }
});
