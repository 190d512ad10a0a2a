// The local pod (what `npm start` runs) on free loopback ports: answers through dnscache → kube-dns,
// the banner and the prefixed lines, edits of the cluster file and the config dir, the sidecar's
// health check following kube-dns down and back up, and SIGTERM leaving no process behind.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { startLocalPod } from '../helpers/localpod.ts';
import { isAlive } from '../helpers/nanny.ts';
import { healthcheck, sample, scrape } from '../helpers/sidecar.ts';
import { answering } from '../helpers/upstreams.ts';

const ZONE = 'svc.cluster.local';

t.test('one pod, asked through its client port', async (t) => {
  const pod = await startLocalPod(t, ['--probe-interval=300ms', '--stats-interval=200ms']);
  const { ports } = pod;

  t.test('cluster names through dnscache, answered by kube-dns', async (t) => {
    t.same(answers(await dig(ports.dns, `kubernetes.default.${ZONE}`), 'A'), ['10.96.0.1']);
    t.same(answers(await dig(ports.dns, `_postgres._tcp.db.default.${ZONE}`, 'SRV'), 'SRV'), [
      `10 50 5432 db-0.db.default.${ZONE}.`,
      `10 50 5432 db-1.db.default.${ZONE}.`,
    ]);
    t.same(answers(await dig(ports.dns, `web.default.${ZONE}`, 'AAAA'), 'AAAA'), ['fd00:10:96::a']);
    t.same(answers(await dig(ports.dns, '', 'A', ['-x', '10.96.0.10']), 'PTR'), [`kube-dns.kube-system.${ZONE}.`], 'reverse names go to kube-dns too');
    const nx = await dig(ports.dns, `nothing.default.${ZONE}`);
    t.equal(nx.status, 'NXDOMAIN');
    t.match(nx.authority[0]?.data ?? '', /^ns\.dns\.cluster\.local\. /, "kube-dns's SOA came through");
  });

  t.test('the example ServiceEntry host through dnscache, answered by kube-dns (--service-entries)', async (t) => {
    t.same(answers(await dig(ports.dns, 'service1.test.global'), 'A'), ['127.255.0.2']);
    const aaaa = await dig(ports.dns, 'service2.test.global', 'AAAA');
    t.same([aaaa.status, aaaa.answer.length], ['NOERROR', 0], 'NODATA for the other family');
  });

  t.test('the banner says what listens where and what to try; every line says whose it is', async (t) => {
    const out = pod.program.output();
    for (const [port, what] of [
      [ports.dns, /DNS +dnscache/],
      [ports.kubedns, /DNS +kube-dns/],
      [ports.healthz, /HTTP +kube-dns: \/readiness/],
      [ports.sidecar, /HTTP +sidecar: \/healthcheck\/kubedns/],
      [ports.nanny, /HTTP +dnsmasq-nanny: \/metrics/],
    ] as const) {
      t.match(out, new RegExp(`  127\\.0\\.0\\.1:${port} +${what.source}`), `127.0.0.1:${port}`);
    }
    t.match(out, `dig @127.0.0.1 -p ${ports.dns} kubernetes.default.${ZONE}`);
    t.match(out, `curl http://127.0.0.1:${ports.sidecar}/healthcheck/kubedns`);
    t.match(out, `curl http://127.0.0.1:${ports.healthz}/readiness`);
    t.match(out, `curl http://127.0.0.1:${ports.nanny}/metrics`);
    for (const program of ['kube-dns', 'dnsmasq-nanny', 'dnscache', 'sidecar', 'local-pod']) {
      t.match(out, new RegExp(`^${program} +\\| \\S+ I ${program}[:/]`, 'm'), `${program}'s lines are prefixed`);
    }
    t.notMatch(out, /^(?!(kube-dns|dnsmasq-nanny|dnscache|sidecar|local-pod) +\| ).*\d{4}-\d\d-\d\dT[\d:.]+Z [IWED] /m, 'no log line without its program');
  });

  t.test('a service added to the cluster file is answered; a changed address is served by kube-dns', async (t) => {
    const before = readFileSync(pod.clusterFile, 'utf8');
    t.equal((await dig(ports.kubedns, `added.default.${ZONE}`)).status, 'NXDOMAIN', 'not there yet (asked of kube-dns: dnscache would cache the NXDOMAIN)');
    const added = `
- apiVersion: v1
  kind: Service
  metadata: {name: added, namespace: default}
  spec: {type: ClusterIP, clusterIP: 10.96.20.20, clusterIPs: [10.96.20.20], ports: [{name: http, port: 80, protocol: TCP}]}
`;
    pod.writeFile(pod.clusterFile, before.replaceAll('10.96.10.10', '10.96.10.99') + added);
    // kube-dns first: asked earlier, dnscache would keep the NXDOMAIN for the SOA's negative TTL.
    await eventually(async () => (await dig(ports.kubedns, `added.default.${ZONE}`)).status === 'NOERROR', 'kube-dns serves the added service');
    t.same(answers(await dig(ports.dns, `added.default.${ZONE}`), 'A'), ['10.96.20.20'], 'through dnscache');
    t.same(answers(await dig(ports.kubedns, `web.default.${ZONE}`), 'A'), ['10.96.10.99'], 'the changed address');
  });

  t.test('a stub domain written to the config dir is used by dnscache', async (t) => {
    const stub = await answering(t, { addresses: ['192.0.2.7'] });
    pod.writeFile(join(pod.configDir, 'stubDomains'), JSON.stringify({ 'example.test': [`127.0.0.1:${stub.port}`] }));
    const got = await eventually(async () => answers(await dig(ports.dns, 'www.example.test'), 'A').join(), 'the stub server answers through dnscache');
    t.equal(got, '192.0.2.7');
    t.ok(stub.ids.length >= 1, 'the stub server was asked');
  });

  t.test('kube-dns killed: its health check turns 503, and 200 once it is started again', async (t) => {
    const healthy = (label: string) => eventually(async () => (await healthcheck(ports.sidecar, label)).status === 200, `${label} healthy`);
    await healthy('kubedns');
    await healthy('dnsmasq');
    const [pid] = pod.pidsOf('kube-dns');
    const errorsBefore = sample(await scrape(ports.sidecar), 'kubedns_probe_kubedns_errors');
    process.kill(pid, 'SIGKILL');
    const down = await eventually(async () => {
      const h = await healthcheck(ports.sidecar, 'kubedns');
      return h.status === 503 && h;
    }, 'kubedns health check 503');
    // Refused, or no reply when a probe was in flight as kube-dns died.
    t.match(down.json, { IsOk: false, Err: new RegExp(`^udp 127\\.0\\.0\\.1:${ports.kubedns}: (connection refused|no reply within)`) });
    t.ok(sample(await scrape(ports.sidecar), 'kubedns_probe_kubedns_errors') > errorsBefore, 'the failing probe is counted');
    await eventually(async () => pod.pidsOf('kube-dns').length === 2, 'kube-dns started again', 10_000);
    await eventually(async () => (await healthcheck(ports.sidecar, 'kubedns')).status === 200, 'kubedns health check 200 again', 10_000);
    t.not(pod.pidsOf('kube-dns')[1], pid, 'a new process');
    t.same(answers(await dig(ports.kubedns, `kubernetes.default.${ZONE}`), 'A'), ['10.96.0.1'], 'answering again');
  });

  t.test('SIGTERM: exit 0, every process gone', async (t) => {
    const pids = pod.childPids();
    t.ok(pids.length >= 5, 'kube-dns (twice), the nanny, dnscache and the sidecar were started');
    t.equal(await pod.program.stop('SIGTERM'), 0);
    t.same(pids.filter(isAlive), [], 'no process left');
    t.match(pod.program.output(), /local-pod\/dnsmasq-nanny: child stopped pid=\d+ how="exit code 0"/);
    t.match(pod.program.output(), /dnsmasq-nanny\/dnscache: child stopped pid=\d+ how="exit code 0"/);
  });
});
