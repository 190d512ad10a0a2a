// npm run bench:ab -- <checkout>: kube-dns and dnscache built from this checkout against the ones
// built in <checkout> (its dist/, e.g. a worktree of the commit before a hot-path change), on the
// same cluster file (the two dnscaches in front of one kube-dns), dnsperf rounds alternated:
// cache-hit QPS and the user CPU per query (BENCH_AB_TCP=1: over TCP). For changes
// that must not cost the query path anything ("measure QPS before and after in one run").
// Noise floor: an A/A run (the baseline a worktree of the same commit, 2026-11-24) read kube-dns
// QPS 0.98 and dnscache 0.98, so a ratio within ±0.02 is no difference.
// Writes bench/results/ab-<date>.{json,md}.

import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { cpuTimeMs, repoRoot, startKubeDns } from './servers.ts';
import type { Running } from './servers.ts';
import { startDnscache } from './dnscache-servers.ts';
import { freePort } from '../test/helpers/ports.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { median } from './stats.ts';

const baseline = process.argv[2] ?? process.env.BENCH_BASELINE;
if (!baseline) {
  console.error('usage: npm run bench:ab -- <checkout with dist/ built>');
  process.exit(2);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** BENCH_AB_TCP=1: the queries over TCP (dnsperf -m tcp, one connection), for a change to the TCP path. */
const TCP = process.env.BENCH_AB_TCP === '1';
const MODE = TCP ? ['-m', 'tcp'] : [];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const SERVICES = 2000;
/** Headless, so every answer holds this many A records (what round robin rotates). */
const ENDPOINTS = 5;

interface Side {
  /** The program measured: kube-dns asked directly, or dnscache (its cache hits) in front of kube-dns. */
  program: 'kube-dns' | 'dnscache';
  name: string;
  commit: string;
  qps: number[];
  /** User CPU milliseconds per 1,000 queries, per round. */
  cpuPerK: number[];
}

async function main(dir: string): Promise<Side[]> {
  const c = makeCluster(SERVICES, ENDPOINTS);
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  writeFileSync(join(dir, 'queries'), c.queries);
  const builds = [
    { name: 'this checkout', root: repoRoot },
    { name: 'baseline', root: baseline! },
  ];
  const running: Running[] = [];
  const out: Side[] = [];
  try {
    for (const b of builds) {
      running.push(await startKubeDns(dir, join(dir, 'cluster.json'), [], b.root));
      out.push({ program: 'kube-dns', name: b.name, commit: commitOf(b.root), qps: [], cpuPerK: [] });
    }
    // Both caches in front of this checkout's kube-dns: every measured query is a cache hit.
    for (const b of builds) {
      running.push(await startDnscache(dir, await freePort(), running[0].port, [], b.root));
      out.push({ program: 'dnscache', name: b.name, commit: commitOf(b.root), qps: [], cpuPerK: [] });
    }
    for (const r of running) await dnsperf(r.port, join(dir, 'queries'), 2);
    for (let round = 0; round < ROUNDS; round++) {
      // Which build goes first swaps every round, so that neither gains from the order.
      for (const i of round % 2 === 0 ? [0, 1, 2, 3] : [1, 0, 3, 2]) {
        const r = running[i];
        const before = cpuTimeMs(r.pid).user;
        const p = await dnsperf(r.port, join(dir, 'queries'), SECONDS, MODE);
        out[i].qps.push(p.qps);
        out[i].cpuPerK.push(((cpuTimeMs(r.pid).user - before) / (p.qps * SECONDS)) * 1000);
      }
      console.log(`  round ${round + 1}: ${out.map((s) => `${s.program} ${s.name} ${s.qps.at(-1)!.toFixed(0)} QPS`).join(', ')}`);
    }
  } finally {
    for (const r of running) await r.stop();
  }
  return out;
}

const load = loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`bench:ab: ${SERVICES} services, ${ROUNDS} alternated rounds of ${SECONDS}s, ${cpus().length} CPUs, node ${process.version}, load ${load}`);
const sides = await inTempDir('kdt-bench-ab-', main);
const when = new Date().toISOString();
const ratios = (['kube-dns', 'dnscache'] as const).map((program) => {
  const [ours, base] = sides.filter((s) => s.program === program);
  return `${program}: QPS **${(median(ours.qps) / median(base.qps)).toFixed(2)}**, CPU per query **${(median(ours.cpuPerK) / median(base.cpuPerK)).toFixed(2)}**`;
});
const md = `# kube-dns and dnscache, this checkout against a baseline build (${when})

node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${load}. Both builds with the production Node flags. kube-dns on the same cluster file of ${SERVICES} headless services with ${ENDPOINTS} endpoints each; dnscache (\`--cache-size=10000\`) in front of this checkout's kube-dns. dnsperf -T 1 -c 1 -q 200 -l ${SECONDS}${TCP ? ' -m tcp (over one TCP connection)' : ' (over UDP)'}, A queries in random order (every one a cache hit after the warm-up); ${ROUNDS} alternated rounds, medians.

| program | build | commit | QPS | user CPU per 1,000 queries |
|---|---|---|---|---|
${sides.map((s) => `| ${s.program} | ${s.name} | ${s.commit} | ${median(s.qps).toFixed(0)} | ${median(s.cpuPerK).toFixed(1)} ms |`).join('\n')}

This checkout / baseline: ${ratios.join('; ')}.
`;
writeResults(TCP ? 'ab-tcp' : 'ab', when, { node: process.version, cpus: cpus().length, load, services: SERVICES, rounds: ROUNDS, seconds: SECONDS, transport: TCP ? 'tcp' : 'udp', sides }, md);
