// npm run bench:visibility (issue 26): what the `visibility` policy costs kube-dns. The same 2,000
// Services asked of two kube-dns (one thread each, CPU 0), one with a policy in its ConfigMap
// (`{"unknownAskers": "allow"}`: everyone still sees everything, so both answer the same), one
// without, alternated over rounds in one run: dnsperf's most (CPU 1), and the CPU per query. Under a
// policy no answer of the zone is served from the cache (each is scoped to its asker): every query
// runs the zone lookup and the decision; without it the names are cache hits.
// Writes bench/results/visibility-cost-<date>.{json,md}.

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { cpuTimeMs, repoRoot, startKubeDns } from './servers.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { median } from './stats.ts';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const POLICY = '{"unknownAskers": "allow"}';

/** The cluster file with the ConfigMap `kube-dns-policy` (with `visibility` or none). */
function withConfigMap(yaml: string, visibility: string | null): string {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns-policy', namespace: 'kube-system' }, data: visibility === null ? {} : { visibility } };
  return yaml.replace(/\n\]\}\n$/, `,\n${JSON.stringify(cm)}\n]}\n`);
}

async function main(dir: string) {
  const c = makeCluster(2000);
  const queries = join(dir, 'queries');
  writeFileSync(queries, c.queries);
  const start = async (k: 'on' | 'off') => {
    const file = join(dir, `cluster-${k}.json`);
    writeFileSync(file, withConfigMap(c.yaml, k === 'on' ? POLICY : null));
    const s = await startKubeDns(dir, file, ['--config-map=kube-dns-policy']);
    await run('taskset', ['-a', '-cp', '0', String(s.pid)]);
    await new Promise((r) => setTimeout(r, 1000)); // the ConfigMap read after the sync
    return s;
  };
  const servers = { on: await start('on'), off: await start('off') };
  const figures = { on: { qps: [] as number[], us: [] as number[] }, off: { qps: [] as number[], us: [] as number[] } };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const s = servers[k];
        const before = cpuTimeMs(s.pid);
        const p = await dnsperf(s.port, queries, SECONDS, ['-c', '8', '-q', '200'], '1');
        const after = cpuTimeMs(s.pid);
        figures[k].qps.push(Math.round(p.qps));
        figures[k].us.push(Math.round(((after.user + after.sys - before.user - before.sys) * 1000 * 100) / p.completed) / 100);
      }
      console.log(`  round ${r + 1}: on ${figures.on.qps[r]} QPS ${figures.on.us[r]} us, off ${figures.off.qps[r]} QPS ${figures.off.us[r]} us`);
    }
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  return figures;
}

const when = new Date().toISOString();
const f = await inTempDir('kdt-bench-visibility-', main);
const qpsRatio = median(f.on.qps) / median(f.off.qps);
const cpuRatio = median(f.on.us) / median(f.off.us);
const md = `# What the visibility policy costs kube-dns (${when})

${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs, load average at start ${loadavg()[0].toFixed(2)}. Two kube-dns (one thread, CPU 0) with the same 2,000 Services, one with \`visibility: ${POLICY}\` in its ConfigMap, one without; dnsperf (CPU 1, -c 8 -q 200) asking the Services' names, ${SECONDS} s a round, ${ROUNDS} rounds alternated.

| policy | QPS, per round | CPU µs/query, per round |
|---|---|---|
| on | ${f.on.qps.join(' / ')} | ${f.on.us.join(' / ')} |
| off | ${f.off.qps.join(' / ')} | ${f.off.us.join(' / ')} |

On / off: QPS **${qpsRatio.toFixed(2)}×**, CPU per query **${cpuRatio.toFixed(2)}×**.
`;
writeResults('visibility-cost', when, { policy: POLICY, rounds: ROUNDS, seconds: SECONDS, ...f, qpsRatio, cpuRatio }, md);
console.log(md);
