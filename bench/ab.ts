// npm run bench:ab -- <checkout>: kube-dns built from this checkout against the one built in
// <checkout> (its dist/, e.g. a worktree of the commit before a hot-path change), on the same
// cluster file, dnsperf rounds alternated: cache-hit QPS and the user CPU per query. For changes
// that must not cost the query path anything ("measure QPS before and after in one run").
// Writes bench/results/ab-<date>.{json,md}.

import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { cpuTimeMs, repoRoot, startKubeDns } from './servers.ts';
import { inTempDir, writeResults } from './report.ts';
import { median } from './stats.ts';

const baseline = process.argv[2] ?? process.env.BENCH_BASELINE;
if (!baseline) {
  console.error('usage: npm run bench:ab -- <checkout with dist/ built>');
  process.exit(2);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const SERVICES = 2000;
/** Headless, so every answer holds this many A records (what round robin rotates). */
const ENDPOINTS = 5;
/** The checkout's commit, and whether its tree differs from it (the build is of the tree). */
function commit(dir: string): string {
  const head = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
  return dirty ? `${head} + uncommitted changes` : head;
}

interface Side {
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
  const sides = [
    { name: 'this checkout', root: repoRoot },
    { name: 'baseline', root: baseline! },
  ];
  const running = [];
  for (const s of sides) running.push(await startKubeDns(dir, join(dir, 'cluster.json'), [], s.root));
  const out: Side[] = sides.map((s) => ({ name: s.name, commit: commit(s.root), qps: [], cpuPerK: [] }));
  try {
    for (const r of running) await dnsperf(r.port, join(dir, 'queries'), 2);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, r] of running.entries()) {
        const before = cpuTimeMs(r.pid).user;
        const p = await dnsperf(r.port, join(dir, 'queries'), SECONDS);
        out[i].qps.push(p.qps);
        out[i].cpuPerK.push(((cpuTimeMs(r.pid).user - before) / (p.qps * SECONDS)) * 1000);
      }
      console.log(`  round ${round + 1}: ${out.map((s) => `${s.name} ${s.qps.at(-1)!.toFixed(0)} QPS`).join(', ')}`);
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
const [ours, base] = sides;
const md = `# kube-dns, this checkout against a baseline build (${when})

node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), load average at start ${load}. Both builds with the production Node flags on the same cluster file of ${SERVICES} headless services with ${ENDPOINTS} endpoints each; dnsperf -T 1 -c 1 -q 200 -l ${SECONDS}, A queries in random order (every one a cache hit after the warm-up); ${ROUNDS} alternated rounds, medians.

| build | commit | QPS | user CPU per 1,000 queries |
|---|---|---|---|
${sides.map((s) => `| ${s.name} | ${s.commit} | ${median(s.qps).toFixed(0)} | ${median(s.cpuPerK).toFixed(1)} ms |`).join('\n')}

This checkout / baseline: QPS **${(median(ours.qps) / median(base.qps)).toFixed(2)}**, CPU per query **${(median(ours.cpuPerK) / median(base.cpuPerK)).toFixed(2)}**.
`;
writeResults('ab', when, { node: process.version, cpus: cpus().length, load, services: SERVICES, rounds: ROUNDS, seconds: SECONDS, sides }, md);
