// npm run bench:autopath-faults [-- <baseline checkout>]: how fast a pod learns that a name does not
// exist when the world's DNS does not answer. A pod of `default` asks the first candidate of its search
// walk for a missing name (`nosuch-<i>.default.svc.cluster.local`, the query glibc and musl send first)
// through dnscache --add-subnet=32,128 in front of kube-dns, with kube-dns's upstream and dnscache's
// default server either a closed port (the kernel answers ICMP port unreachable) or a socket that
// reads and drops every query; with --autopath and without. Without autopath kube-dns answers
// NXDOMAIN from the zone; with it, the walk's last step goes upstream first. Each query is timed from
// its send to its reply (no reply in 5 s, glibc's timeout, counts as none), QUERIES a case, sent
// INTERVAL_MS apart. With a baseline checkout (its dist/ built), its kube-dns and dnscache run the
// same cases in the same run. Writes bench/results/autopath-faults-<date>.{json,md}.

import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { yamlDocs } from '../test/helpers/kubedns.ts';
import { makeQuery } from '../test/helpers/packets.ts';
import { freePort } from '../test/helpers/ports.ts';
import { blackhole } from '../test/helpers/upstreams.ts';
import { benchScope, commitOf, inTempDir, writeResults } from './report.ts';
import { startDnscacheWith } from './dnscache-servers.ts';
import { repoRoot, startKubeDns } from './servers.ts';
import type { Running } from './servers.ts';
import { percentile } from './stats.ts';

const baseline = process.argv[2] ?? process.env.BENCH_BASELINE;
const QUERIES = Number(process.env.BENCH_FAULT_QUERIES ?? 200);
const INTERVAL_MS = 20;
const CLIENT_TIMEOUT_MS = 5000;
/** The asking pod's address (a loopback address standing in for a pod IP) and namespace. */
const POD_IP = '127.0.0.21';
const POD = `apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default, uid: uid-client}\nspec: {}\nstatus: {phase: Running, podIP: ${POD_IP}}`;
const RCODES: Record<number, string> = { 0: 'NOERROR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 5: 'REFUSED' };

type Fault = 'refusing' | 'dropping';

interface Case {
  build: string;
  commit: string;
  upstream: Fault;
  autopath: boolean;
  p50Ms: number;
  p99Ms: number;
  /** Replies by rcode name, plus `none` for no reply within the client's timeout. */
  outcomes: Record<string, number>;
}


/** dnscache as the manifest runs it in front of kube-dns, its default server `upstreamPort`. */
async function startCache(dir: string, root: string, kubeDnsPort: number, upstreamPort: number): Promise<Running> {
  const port = await freePort();
  const args = ['-k', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--no-negcache', `--server=/cluster.local/127.0.0.1#${kubeDnsPort}`, `--server=127.0.0.1#${upstreamPort}`, '--add-subnet=32,128', '--log-facility=-', `--pid-file=${join(dir, `dnscache-${port}.pid`)}`];
  return startDnscacheWith(args, port, [], root);
}

/** QUERIES first candidates from the pod's address, INTERVAL_MS apart, each timed to its reply. */
async function ask(port: number, tag: string): Promise<{ ms: number[]; outcomes: Record<string, number> }> {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, POD_IP, () => resolve()));
  const sent = new Map<number, number>();
  const ms: number[] = [];
  const outcomes: Record<string, number> = {};
  const count = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);
  socket.on('message', (msg) => {
    const at = sent.get(msg.readUInt16BE(0));
    if (at === undefined) return;
    sent.delete(msg.readUInt16BE(0));
    ms.push(performance.now() - at);
    count(RCODES[msg[3] & 0x0f] ?? `rcode ${msg[3] & 0x0f}`);
  });
  for (let i = 0; i < QUERIES; i++) {
    sent.set(i, performance.now());
    socket.send(makeQuery(`nosuch-${tag}-${i}.default.svc.cluster.local`, i), port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, INTERVAL_MS));
  }
  const deadline = performance.now() + CLIENT_TIMEOUT_MS;
  while (sent.size > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const [, at] of sent) if (performance.now() - at >= CLIENT_TIMEOUT_MS) count('none');
  socket.close();
  return { ms: ms.sort((a, b) => a - b), outcomes };
}

async function runCase(dir: string, build: { name: string; root: string }, fault: Fault, autopath: boolean): Promise<Case> {
  const scope = benchScope();
  const running: Running[] = [];
  try {
    // A port that refuses (nothing bound there), or the tests' socket that reads every query and answers none.
    const upstream = { port: fault === 'refusing' ? await freePort() : (await blackhole(scope.t)).port };
    const kd = await startKubeDns(dir, join(dir, 'cluster.yaml'), [autopath ? '--autopath' : '--autopath=false', `--nameservers=127.0.0.1:${upstream.port}`], build.root);
    running.push(kd);
    const cache = await startCache(dir, build.root, kd.port, upstream.port);
    running.push(cache);
    const r = await ask(cache.port, `${fault}-${autopath}`);
    const c: Case = { build: build.name, commit: commitOf(build.root), upstream: fault, autopath, p50Ms: percentile(r.ms, 50), p99Ms: percentile(r.ms, 99), outcomes: r.outcomes };
    console.log(JSON.stringify(c));
    return c;
  } finally {
    for (const s of running.reverse()) await s.stop();
    await scope.close();
  }
}

async function main(dir: string): Promise<Case[]> {
  writeFileSync(join(dir, 'cluster.yaml'), yamlDocs(readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8'), POD));
  writeFileSync(join(dir, 'resolv.conf'), '');
  const builds = [{ name: 'this checkout', root: repoRoot }, ...(baseline ? [{ name: 'baseline', root: baseline }] : [])];
  const cases: Case[] = [];
  for (const fault of ['refusing', 'dropping'] as const) {
    for (const autopath of [true, false]) for (const build of builds) cases.push(await runCase(dir, build, fault, autopath));
  }
  return cases;
}

const when = new Date().toISOString();
const load = loadavg()[0];
const cases = await inTempDir('kdt-bench-autopath-faults-', main);
const fmt = (ms: number) => (ms === undefined ? '-' : ms < 10 ? ms.toFixed(2) : ms.toFixed(0));
const outcome = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${v} ${k}`).join(', ');
/** The commit's short hash, `+` for a tree with changes on top. */
const short = (commit: string) => commit.split(' ')[0] + (commit.endsWith('+ uncommitted changes') ? '+' : '');
const md = `# autopath with an upstream that does not answer (${when})

A pod of \`default\` (${POD_IP}) asks the first candidate of its walk for a missing name through dnscache
--add-subnet=32,128 and kube-dns; kube-dns's upstream and dnscache's default server refuse (a closed port)
or drop every query. ${QUERIES} queries a case, ${INTERVAL_MS} ms apart, each timed to its reply; no reply
in ${CLIENT_TIMEOUT_MS / 1000} s counts as none. Node ${process.version}, ${cpus().length} CPUs, load ${load.toFixed(2)}.

| build | upstream | --autopath | p50 ms | p99 ms | replies |
|---|---|---|---|---|---|
${cases.map((c) => `| ${c.build} (${short(c.commit)}) | ${c.upstream} | ${c.autopath ? 'on' : 'off'} | ${fmt(c.p50Ms)} | ${fmt(c.p99Ms)} | ${outcome(c.outcomes)} |`).join('\n')}
`;
writeResults('autopath-faults', when, { node: process.version, cpus: cpus().length, load, queries: QUERIES, intervalMs: INTERVAL_MS, cases }, md);
