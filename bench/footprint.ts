// What every node pays for node-cache (issue 27), beside CoreDNS as upstream's NodeLocal DNSCache runs
// it (the same Corefile: our manifest's, the node's addresses on the namespace's loopback) and a bare
// Node process with one UDP socket: all in one network namespace made for the run, one after the
// other, each pinned to CPU 1 and asked by dnsperf on CPU 0. For each: exec to the first answer, RSS at
// rest (anonymous and file-backed), after 10,000 distinct names (a full cache), after hits at full
// rate, and CPU per hit. Then kube-dns and dnscache at rest beside bare Node and dnsmasq.
//
// BENCH_FOOTPRINT_BASE=<checkout with dist/>: its node-cache, kube-dns and dnscache too (another build
// of ours, to compare). Run as root (the namespace); the run re-executes itself inside it.

import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { dnsperf } from './dnsperf.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { cpuTimeMs, memoryMiB, nodeCacheArgv, productionNodeFlags, programArgs, repoRoot, stopper, waitForLine } from './servers.ts';
import type { Memory } from './servers.ts';
import { corednsBin } from './api-servers.ts';
import { dnsmasqHostsArgs } from '../test/helpers/dnsmasq.ts';
import { service, yamlDocs } from '../test/helpers/kubedns.ts';
import { nodeLocalCorefile } from '../test/e2e/harness/manifests.ts';
import { makeQuery } from '../test/helpers/packets.ts';

const NAMES = 10_000;
const HIT_SECONDS = Number(process.env.BENCH_FOOTPRINT_SECONDS ?? 10);
const REST_MS = 3000;
const LOCAL = '169.254.20.10';
const SERVICE_IP = '10.96.0.10';
const SERVER_CPU = '1';
const LOAD_CPU = '0';
const BASE = process.env.BENCH_FOOTPRINT_BASE;

/** Node and one UDP socket on <address>:53 answering every question with one A record: what Node costs before any of ours. */
const BARE_NODE = `const s = require('node:dgram').createSocket('udp4');
s.on('message', (q, r) => {
  const a = Buffer.concat([q, Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 192, 0, 2, 1])]);
  a[2] = 0x81; a[3] = 0x80; a.writeUInt16BE(1, 6);
  s.send(a, r.port, r.address);
});
s.bind(53, process.argv[1]);`;

interface Footprint {
  name: string;
  startMs: number;
  rest: Memory;
  full?: Memory;
  hits?: Memory;
  hitQps?: number;
  cpuUsPerHit?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `address`:53 answers `name` (a UDP query every 5 ms). */
function firstAnswer(address: string, name: string, ms = 60_000): Promise<void> {
  const socket = createSocket('udp4');
  const query = makeQuery(name, 1);
  return new Promise((resolve, reject) => {
    const tick = setInterval(() => socket.send(query, 53, address, () => undefined), 5);
    const timer = setTimeout(() => done(new Error(`no answer from ${address} within ${ms} ms`)), ms);
    const done = (err?: Error) => {
      clearInterval(tick);
      clearTimeout(timer);
      socket.close();
      if (err) reject(err);
      else resolve();
    };
    socket.on('message', (m) => {
      if ((m[3] & 0x0f) === 0 && m.readUInt16BE(6) > 0) done();
    });
  });
}

function pinned(argv: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn('taskset', ['-c', SERVER_CPU, ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
}

/** Starts `argv`, times it to its first answer of `probe` on `address`, measures it at rest and, with `load`, under the two loads. */
async function measure(name: string, argv: string[], o: { env?: NodeJS.ProcessEnv; address: string; probe: string; load?: string }): Promise<Footprint> {
  const started = performance.now();
  const child = pinned(argv, o.env);
  const stop = stopper(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  try {
    await firstAnswer(o.address, o.probe).catch((err) => {
      throw new Error(`${name}: ${(err as Error).message}\n${output.slice(-2000)}`);
    });
    const startMs = performance.now() - started;
    await sleep(REST_MS);
    const f: Footprint = { name, startMs, rest: memoryMiB(child.pid!) };
    if (o.load !== undefined) {
      await dnsperf(53, o.load, 60, ['-s', o.address, '-n', '1', '-Q', '5000'], LOAD_CPU);
      await sleep(1000);
      f.full = memoryMiB(child.pid!);
      const before = cpuTimeMs(child.pid!);
      const r = await dnsperf(53, o.load, HIT_SECONDS, ['-s', o.address], LOAD_CPU);
      const after = cpuTimeMs(child.pid!);
      f.hits = memoryMiB(child.pid!);
      f.hitQps = r.qps;
      f.cpuUsPerHit = ((after.user + after.sys - before.user - before.sys) * 1000) / r.completed;
    }
    return f;
  } finally {
    await stop();
  }
}

const nodeCacheArgvOf = (root: string, dir: string) => nodeCacheArgv(root, dir, `${LOCAL},${SERVICE_IP}`, nodeLocalCorefile(), ['-upstreamsvc', 'kube-dns-upstream']);

/** Everything, inside the namespace. */
async function inside(dir: string): Promise<Footprint[]> {
  execFileSync('ip', ['addr', 'add', `${LOCAL}/32`, 'dev', 'lo']);
  execFileSync('ip', ['addr', 'add', `${SERVICE_IP}/32`, 'dev', 'lo']);
  const names = Array.from({ length: NAMES }, (_, i) => `n${i}.default.svc.cluster.local`);
  writeFileSync(join(dir, 'hosts'), names.map((n, i) => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255} ${n}`).join('\n') + '\n');
  writeFileSync(join(dir, 'queries'), names.map((n) => `${n} A`).join('\n') + '\n');
  // The cluster DNS behind the cache (and the world's resolver): dnsmasq on 127.0.0.1:53, UDP and TCP.
  const backend = spawn('taskset', ['-c', LOAD_CPU, '/usr/sbin/dnsmasq', ...dnsmasqHostsArgs(53, join(dir, 'hosts'), join(dir, 'dnsmasq.pid'), ['--cache-size=0'])], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stopBackend = stopper(backend);
  const results: Footprint[] = [];
  try {
    await waitForLine(backend, /read .* (names|addresses)/, 'dnsmasq');
    const probe = names[0];
    const load = join(dir, 'queries');
    const env = { KUBE_DNS_UPSTREAM_SERVICE_HOST: '127.0.0.1' };
    results.push(await measure('bare Node (one UDP socket)', [process.execPath, ...productionNodeFlags('node-cache'), '-e', BARE_NODE, LOCAL], { address: LOCAL, probe }));
    results.push(await measure('node-cache (ours)', nodeCacheArgvOf(repoRoot, dir), { env, address: LOCAL, probe, load }));
    if (BASE !== undefined) results.push(await measure(`node-cache (${commitOf(BASE).split(' ')[0]})`, nodeCacheArgvOf(BASE, dir), { env, address: LOCAL, probe, load }));
    const coredns = corednsBin();
    if (coredns !== null) {
      const corefile = join(dir, 'Corefile.coredns');
      writeFileSync(corefile, nodeLocalCorefile().replaceAll('__PILLAR__CLUSTER__DNS__', '127.0.0.1').replaceAll('__PILLAR__UPSTREAM__SERVERS__', '127.0.0.1'));
      results.push(await measure('CoreDNS 1.15 (the same Corefile)', [coredns, '-conf', corefile], { address: LOCAL, probe, load }));
    }
    results.push(...(await atRest(dir, probe)));
  } finally {
    await stopBackend();
  }
  return results;
}

/** kube-dns, dnscache and dnsmasq at rest, each on an address of its own (the backend holds 127.0.0.1:53). */
async function atRest(dir: string, probe: string): Promise<Footprint[]> {
  const cluster = join(dir, 'cluster.yaml');
  writeFileSync(cluster, yamlDocs(service('default', 'web', 'clusterIP: 10.96.0.5\nports:\n- {name: http, port: 80}')));
  writeFileSync(join(dir, 'empty-resolv.conf'), '');
  const cache = (address: string) => ['-k', '--port=53', `--listen-address=${address}`, '--bind-interfaces', '--no-resolv', '--cache-size=10000', '--server=127.0.0.1', '--log-facility=-', `--pid-file=${join(dir, `${address}.pid`)}`];
  const kubeDns = (root: string) => [process.execPath, ...programArgs('kube-dns', root), `--cluster-file=${cluster}`, '--dns-bind-address=127.0.0.2', '--dns-port=53', '--http-bind-address=127.0.0.2', '--healthz-port=8081', `--resolv-conf=${join(dir, 'empty-resolv.conf')}`];
  const dnscache = (root: string) => [process.execPath, ...programArgs('dnscache', root), ...cache('127.0.0.3')];
  const out: Footprint[] = [];
  const web = 'web.default.svc.cluster.local';
  out.push(await measure('kube-dns (ours)', kubeDns(repoRoot), { address: '127.0.0.2', probe: web }));
  if (BASE !== undefined) out.push(await measure(`kube-dns (${commitOf(BASE).split(' ')[0]})`, kubeDns(BASE), { address: '127.0.0.2', probe: web }));
  out.push(await measure('dnscache (ours)', dnscache(repoRoot), { address: '127.0.0.3', probe }));
  if (BASE !== undefined) out.push(await measure(`dnscache (${commitOf(BASE).split(' ')[0]})`, dnscache(BASE), { address: '127.0.0.3', probe }));
  out.push(await measure('dnsmasq (the same flags)', ['/usr/sbin/dnsmasq', ...cache('127.0.0.4')], { address: '127.0.0.4', probe }));
  return out;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--inside') {
    const results = await inTempDir('kdt-bench-footprint-', inside);
    process.stdout.write(`RESULTS ${JSON.stringify(results)}\n`);
    return;
  }
  const ns = `kdt-fp${process.pid}`;
  execFileSync('ip', ['netns', 'add', ns]);
  let out: string;
  try {
    execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    out = execFileSync('ip', ['netns', 'exec', ns, process.execPath, ...process.execArgv, new URL(import.meta.url).pathname, '--inside'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20, env: process.env });
  } finally {
    try {
      for (const pid of execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // none left
    }
    execFileSync('ip', ['netns', 'del', ns]);
  }
  const results = JSON.parse(/^RESULTS (.*)$/m.exec(out)![1]) as Footprint[];
  report(results);
}

function report(results: Footprint[]): void {
  const when = new Date().toISOString();
  const mem = (m?: Memory) => (m === undefined ? '' : `${m.rssMiB.toFixed(1)} (${m.anonMiB.toFixed(1)} + ${m.fileMiB.toFixed(1)})`);
  const rows = results.map((r) => `| ${r.name} | ${r.startMs.toFixed(0)} | ${mem(r.rest)} | ${mem(r.full)} | ${mem(r.hits)} | ${r.hitQps?.toFixed(0) ?? ''} | ${r.cpuUsPerHit?.toFixed(1) ?? ''} |`);
  const md = `# What a node pays for its DNS cache (${when})

${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim()}), load average at start ${loadavg()[0].toFixed(2)}. One network namespace, the subjects one after the other on CPU ${SERVER_CPU}, with our manifest's node-local Corefile (the node's addresses ${LOCAL} and ${SERVICE_IP} on lo; node-cache without its interface and rules); behind them dnsmasq (no cache) with ${NAMES.toLocaleString('en')} names, on CPU ${LOAD_CPU} with dnsperf. RSS in MiB as anonymous + file-backed: at rest ${REST_MS / 1000} s after the first answer; after one pass of the ${NAMES.toLocaleString('en')} names (every one a miss, then cached); after ${HIT_SECONDS} s of hits at full rate (dnsperf, 1 thread, 200 in flight).

| subject | exec to first answer ms | RSS at rest | after ${NAMES.toLocaleString('en')} names | after hits | hits/s | CPU µs per hit |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
  writeResults('footprint', when, { names: NAMES, hitSeconds: HIT_SECONDS, results }, md);
}

await main();
