// npm run bench:miss-cost (issue 26): what the fair shares cost a miss. kube-dns answering made-up
// cluster names (every one a miss: no entry per name, the shared NXDOMAIN template) at a fixed rate
// from 8 askers, with --fair-share-busy at its default and at 0 (off), alternated over rounds in one
// run: the CPU per query of each. No flood: nothing is shared, only the bookkeeping runs.
// Writes bench/results/miss-cost-<date>.{json,md}.

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { cpuPerQuery, repoRoot, startKubeDns } from './servers.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { median } from './stats.ts';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATE = 2500;
const ASKERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${11 + i}`);

/** CPU per completed query, and queries lost (a miss dropped by a share shows as both: the CPU is divided by fewer). */
function round(port: number, pid: number, files: string[]): Promise<{ us: number; lost: number }> {
  return cpuPerQuery(pid, () => Promise.all(ASKERS.map((a, i) => dnsperf(port, files[i], SECONDS, ['-a', a, '-Q', String(RATE), '-n', '1'], '1'))));
}

async function main(dir: string) {
  const c = makeCluster(16);
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  const servers = { on: await startKubeDns(dir, join(dir, 'cluster.json')), off: await startKubeDns(dir, join(dir, 'cluster.json'), ['--fair-share-busy=0']) };
  for (const s of Object.values(servers)) await run('taskset', ['-a', '-cp', '0', String(s.pid)]);
  const us: Record<'on' | 'off', number[]> = { on: [], off: [] };
  const lost: Record<'on' | 'off', number[]> = { on: [], off: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const files = ASKERS.map((_, i) => {
          const f = join(dir, `${k}-${r}-${i}`);
          writeFileSync(f, Array.from({ length: RATE * (SECONDS + 1) }, (_, n) => `m${r}-${i}-${n}.default.svc.cluster.local A`).join('\n') + '\n');
          return f;
        });
        const measured = await round(servers[k].port, servers[k].pid, files);
        us[k].push(measured.us);
        lost[k].push(measured.lost);
      }
      console.log(`  round ${r + 1}: on ${us.on[r].toFixed(2)} us/query (${lost.on[r]} lost), off ${us.off[r].toFixed(2)} (${lost.off[r]} lost)`);
    }
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  return { us, lost };
}

const when = new Date().toISOString();
const { us, lost } = await inTempDir('kdt-bench-miss-', main);
const ratio = median(us.on) / median(us.off);
const md = `# What the fair shares cost a miss (${when})

${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs, load average at start ${loadavg()[0].toFixed(2)}. kube-dns (one thread, CPU 0) answering made-up cluster names (every one a miss) from 8 askers at ${RATE}/s each (dnsperf -a, CPU 1), ${SECONDS} s a round, ${ROUNDS} rounds alternated; CPU per query, user + system.

| --fair-share-busy | CPU µs/query, per round | median | queries lost, per round |
|---|---|---|---|
| 90 (default) | ${us.on.map((v) => v.toFixed(2)).join(' / ')} | ${median(us.on).toFixed(2)} | ${lost.on.join(' / ')} |
| 0 (off) | ${us.off.map((v) => v.toFixed(2)).join(' / ')} | ${median(us.off).toFixed(2)} | ${lost.off.join(' / ')} |

On / off: **${ratio.toFixed(3)}×**. Nothing is shared without a flood: a query lost with the shares on is a fault of theirs, and inflates their CPU per query.
`;
writeResults('miss-cost', when, { rate: RATE, seconds: SECONDS, us, lost, ratio }, md);
console.log(md);
