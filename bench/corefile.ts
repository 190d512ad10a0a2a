// npm run bench:corefile: kube-dns given kubeadm's Corefile (-conf) beside CoreDNS 1.15 given the same,
// and beside kube-dns with its own flags, on one real kube-apiserver (the e2e harness's) with
// BENCH_COREFILE_SERVICES headless Services of 5 endpoints. Each server pinned to CPU 0 (CoreDNS with
// GOMAXPROCS=1, kube-dns at --workers=auto, which the affinity makes 1), dnsperf to CPU 1. Per server:
// spawn to /ready, RSS after the sync and after the load, and for two loads — cluster names (the
// kubernetes plugin) and names outside the cluster (forward, then cache 30: hits after the first ask) —
// QPS (dnsperf's maximum) and CPU microseconds per query, rounds alternated.
// Writes bench/results/corefile-<date>.{json,md}.

import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { binariesAvailable, startBenchCluster } from './api-cluster.ts';
import type { KubeObject } from './api-cluster.ts';
import { corednsBin, startKubeDnsApi, startWithCorefile } from './api-servers.ts';
import type { ApiDnsServer } from './api-servers.ts';
import { dnsperf } from './dnsperf.ts';
import { makeCluster } from './fixtures.ts';
import { commitOf, writeResults } from './report.ts';
import { cpuTimeMs, programArgs, repoRoot, rssMiB, startDnsmasq } from './servers.ts';
import { median } from './stats.ts';
import { kubeadmCorefile } from '../test/e2e/harness/manifests.ts';
import { dnsmasqReadableDir } from '../test/helpers/dnsmasq.ts';
import { freePort } from '../test/helpers/ports.ts';

const SERVICES = Number(process.env.BENCH_COREFILE_SERVICES ?? 2000);
const OUTSIDE_NAMES = 2000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const LOADS = ['cluster', 'outside'] as const;

interface Figures {
  readyMs: number;
  rssAfterSyncMiB: number;
  rssAfterLoadMiB: number;
  qps: Record<(typeof LOADS)[number], number[]>;
  cpuUs: Record<(typeof LOADS)[number], number[]>;
}

/** kubeadm's Corefile on loopback: `port`, ready on `ready`, forwarding to `upstream`, the API through `kubeconfig`. */
function corefile(port: number, ready: number, upstream: number, kubeconfig: string): string {
  return kubeadmCorefile()
    .replace('.:53 {', `.:${port} {\n    bind 127.0.0.1`)
    .replace(/health \{\n\s*lameduck 5s\n\s*\}\n/, '')
    .replace(/^(\s*)ready$/m, `$1ready 127.0.0.1:${ready}`)
    .replace(/^\s*prometheus :9153\n/m, '')
    .replace('forward . /etc/resolv.conf {', `forward . 127.0.0.1:${upstream} {`)
    .replace('ttl 30', `ttl 30\n       kubeconfig ${kubeconfig}`);
}

const available = binariesAvailable();
const coredns = corednsBin();
if (!available.ok || coredns === null) {
  console.log(`bench:corefile skipped: ${available.ok ? 'CoreDNS not built (bash bench/build-coredns.sh)' : available.why}`);
  process.exit(0);
}
const work = dnsmasqReadableDir('kdt-bench-corefile-');
const fixture = makeCluster(SERVICES, 5);
const outside = Array.from({ length: OUTSIDE_NAMES }, (_, i) => `ext${i}.example.org`);
writeFileSync(join(work, 'cluster-queries'), fixture.queries);
writeFileSync(join(work, 'outside-queries'), outside.map((n) => `${n} A`).join('\n') + '\n');
writeFileSync(join(work, 'hosts'), outside.map((n, i) => `192.0.2.${i % 250} ${n}`).join('\n') + '\n');
const objects = (JSON.parse(fixture.yaml) as { items: KubeObject[] }).items;
const figures: Record<string, Figures> = {};
const load = `${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${loadavg()[0].toFixed(2)}`;
const bc = await startBenchCluster();
let upstream: Awaited<ReturnType<typeof startDnsmasq>> | null = null;
try {
  upstream = await startDnsmasq(work, join(work, 'hosts'), await freePort(), ['--local-ttl=300']);
  const upstreamPort = upstream.port;
  await bc.createAll([...new Set(objects.map((o) => o.metadata.namespace!))].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  await bc.createAll(objects, 8);
  const kubeconfig = bc.cluster.kubeconfig(bc.cluster.adminToken);
  const pinned = ['taskset', '-c', '0'];
  const starters: Record<string, () => Promise<ApiDnsServer>> = {
    'kube-dns -conf': async () => {
      const [port, ready] = [await freePort(), await freePort()];
      return startWithCorefile('kube-dns -conf', [...pinned, process.execPath, ...programArgs('kube-dns')], work, corefile(port, ready, upstreamPort, kubeconfig), port, `http://127.0.0.1:${ready}/ready`);
    },
    'CoreDNS 1.15': async () => {
      const [port, ready] = [await freePort(), await freePort()];
      return startWithCorefile('CoreDNS 1.15', ['env', 'GOMAXPROCS=1', ...pinned, coredns], work, corefile(port, ready, upstreamPort, kubeconfig), port, `http://127.0.0.1:${ready}/ready`);
    },
    // kube-dns with its own flags answers the cluster only (its pod's dnscache forwards and caches the rest).
    'kube-dns (flags)': async () => {
      const s = await startKubeDnsApi(work, kubeconfig, { name: 'kube-dns (flags)', args: [`--nameservers=127.0.0.1:${upstreamPort}`] });
      execFileSync('taskset', ['-a', '-p', '-c', '0', String(s.daemon.pid)], { stdio: 'ignore' });
      return s;
    },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, start] of Object.entries(starters)) {
      const s = await start();
      try {
        const f = (figures[name] ??= { readyMs: s.readyMs, rssAfterSyncMiB: rssMiB(s.daemon.pid), rssAfterLoadMiB: 0, qps: { cluster: [], outside: [] }, cpuUs: { cluster: [], outside: [] } });
        for (const l of name === 'kube-dns (flags)' ? (['cluster'] as const) : LOADS) {
          const queries = join(work, `${l}-queries`);
          await dnsperf(s.port, queries, 2, ['-T', '1', '-c', '8', '-q', '200'], '1');
          const before = cpuTimeMs(s.daemon.pid);
          const perf = await dnsperf(s.port, queries, SECONDS, ['-T', '1', '-c', '8', '-q', '200'], '1');
          const after = cpuTimeMs(s.daemon.pid);
          f.qps[l].push(Math.round(perf.qps));
          f.cpuUs[l].push(Math.round((((after.user + after.sys - before.user - before.sys) * 1000) / Math.max(1, perf.completed)) * 10) / 10);
          console.log(`# round ${round + 1}: ${name}, ${l} names: ${Math.round(perf.qps)} QPS, ${f.cpuUs[l].at(-1)} us CPU/query, lost ${perf.lost}`);
        }
        f.rssAfterLoadMiB = Math.round(rssMiB(s.daemon.pid));
        f.rssAfterSyncMiB = Math.round(f.rssAfterSyncMiB);
      } finally {
        await s.daemon.stop();
      }
    }
  }
} finally {
  await upstream?.stop();
  await bc.close();
  rmSync(work, { recursive: true, force: true });
}

const when = new Date().toISOString();
const cell = (xs: number[]) => (xs.length === 0 ? '-' : xs.join(' / '));
const ratio = (l: (typeof LOADS)[number]) => (median(figures['kube-dns -conf'].qps[l]) / median(figures['CoreDNS 1.15'].qps[l])).toFixed(2);
const rows = Object.entries(figures).map(([name, f]) => `| ${name} | ${Math.round(f.readyMs)} | ${f.rssAfterSyncMiB} / ${f.rssAfterLoadMiB} | ${cell(f.qps.cluster)} | ${cell(f.cpuUs.cluster)} | ${cell(f.qps.outside)} | ${cell(f.cpuUs.outside)} |`);
const md = `# kubeadm's Corefile: kube-dns -conf beside CoreDNS (${when})

${load}. One kube-apiserver + etcd (the e2e harness), ${SERVICES} headless Services of 5 endpoints created before the servers start; each server pinned to CPU 0 (CoreDNS GOMAXPROCS=1; kube-dns --workers=auto: 1 by the affinity), dnsperf -T 1 -c 8 -q 200 on CPU 1 for ${SECONDS} s after a 2 s pass; ${ROUNDS} rounds in order. kubeadm's Corefile on loopback (health and prometheus left out, forward to one dnsmasq with ${OUTSIDE_NAMES} names at TTL 300). Cluster names: A of the Services (5 records each); outside names: A of names the upstream has, kept by \`cache 30\` after the first ask. kube-dns (flags): kube-dns with its own flags (one thread, moved to CPU 0 once ready), cluster names only.

| server | spawn to ready (ms) | RSS after sync / after load (MiB) | cluster QPS, per round | CPU µs/query | outside QPS, per round | CPU µs/query |
|---|---|---|---|---|---|---|
${rows.join('\n')}

kube-dns -conf / CoreDNS, median QPS: cluster names ${ratio('cluster')}×, outside names ${ratio('outside')}×. kube-dns -conf / kube-dns (flags), cluster names: ${(median(figures['kube-dns -conf'].qps.cluster) / median(figures['kube-dns (flags)'].qps.cluster)).toFixed(2)}×.
`;
writeResults('corefile', when, { load, services: SERVICES, rounds: ROUNDS, seconds: SECONDS, figures }, md);
