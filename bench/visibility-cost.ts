// npm run bench:visibility (issue 26): what the `visibility` policy costs kube-dns. The same 2,000
// Services asked of two kube-dns (one thread each, CPU 0), one with a policy in its ConfigMap
// (`{"unknownAskers": "allow"}`: everyone still sees everything, so both answer the same), one
// without, alternated over rounds in one run: dnsperf's most (CPU 1), and the CPU per query. Under a
// policy dnsperf's answers are kept under its namespace's cache partition (unknown: one for all such
// askers), so the repeats are cache hits as without it; what is left is the partition's lookup.
// Then the oracle question: a third kube-dns whose policy denies unknown askers (dnsperf's address is
// no pod's), asked, interleaved at a fixed rate, the Services' names (hidden from it) and names of the
// same namespaces that do not exist: the latency of each kind, and the CPU per query of each alone.
// Writes bench/results/visibility-cost-<date>.{json,md}.

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { dnsperf, dnsperfTimes, quantile } from './dnsperf.ts';
import { cpuTimeMs, repoRoot, startKubeDns } from './servers.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { median } from './stats.ts';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const POLICY = '{"unknownAskers": "allow"}';
const DENY = '{"unknownAskers": "deny"}';
const TIMED_RATE = Number(process.env.BENCH_TIMED_RATE ?? 2000);
const TIMED_SECONDS = Number(process.env.BENCH_TIMED_SECONDS ?? 10);

type Kind = 'hidden' | 'missing';
interface Timing {
  ms: Record<Kind, { p50: number; p90: number; p99: number; answered: number }>;
  us: Record<Kind, number[]>;
}

/** The cluster file with the ConfigMap `kube-dns-policy` (with `visibility` or none). */
function withConfigMap(yaml: string, visibility: string | null): string {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-dns-policy', namespace: 'kube-system' }, data: visibility === null ? {} : { visibility } };
  return yaml.replace(/\n\]\}\n$/, `,\n${JSON.stringify(cm)}\n]}\n`);
}

async function main(dir: string) {
  const c = makeCluster(2000);
  const queries = join(dir, 'queries');
  writeFileSync(queries, c.queries);
  const start = async (k: 'on' | 'off' | 'deny') => {
    const file = join(dir, `cluster-${k}.json`);
    writeFileSync(file, withConfigMap(c.yaml, k === 'on' ? POLICY : k === 'deny' ? DENY : null));
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
  return { ...figures, timing: await timing(dir, c.queries, () => start('deny')) };
}

/** Hidden against missing names from an asker the policy denies: latency interleaved, CPU each alone. */
async function timing(dir: string, services: string, start: () => ReturnType<typeof startKubeDns>): Promise<Timing> {
  const hidden = services.trim().split('\n');
  const missing = hidden.map((q) => `nx-${q}`);
  const files = { hidden: join(dir, 'hidden'), missing: join(dir, 'missing'), both: join(dir, 'both') };
  writeFileSync(files.hidden, hidden.join('\n') + '\n');
  writeFileSync(files.missing, missing.join('\n') + '\n');
  writeFileSync(files.both, hidden.flatMap((q, i) => [q, missing[i]]).join('\n') + '\n');
  const s = await start();
  try {
    const { times } = await dnsperfTimes(s.port, files.both, TIMED_SECONDS, TIMED_RATE, [], '1');
    const of = (k: Kind) => {
      const ms = times.filter((x) => x.name.startsWith('nx-') === (k === 'missing')).map((x) => x.ms);
      return { p50: quantile(ms, 0.5), p90: quantile(ms, 0.9), p99: quantile(ms, 0.99), answered: ms.length };
    };
    const us: Timing['us'] = { hidden: [], missing: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 === 0 ? (['hidden', 'missing'] as const) : (['missing', 'hidden'] as const)) {
        const before = cpuTimeMs(s.pid);
        const p = await dnsperf(s.port, files[k], SECONDS, ['-c', '8', '-q', '200'], '1');
        const after = cpuTimeMs(s.pid);
        us[k].push(Math.round(((after.user + after.sys - before.user - before.sys) * 1000 * 100) / p.completed) / 100);
      }
    }
    return { ms: { hidden: of('hidden'), missing: of('missing') }, us };
  } finally {
    await s.stop();
  }
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

## Hidden or missing: what an asker the policy denies can tell

A kube-dns with \`visibility: ${DENY}\` (dnsperf's address is no pod's: every Service but the shared ones is hidden from it). Latency at ${TIMED_RATE} queries/s for ${TIMED_SECONDS} s, the 2,000 Services' names and as many names of the same namespaces that do not exist, interleaved; CPU per query with each kind alone at dnsperf's most, ${ROUNDS} rounds alternated.

| names | answered | p50 ms | p90 ms | p99 ms | CPU µs/query, per round |
|---|---|---|---|---|---|
${(['hidden', 'missing'] as const).map((k) => `| ${k} | ${f.timing.ms[k].answered} | ${f.timing.ms[k].p50.toFixed(3)} | ${f.timing.ms[k].p90.toFixed(3)} | ${f.timing.ms[k].p99.toFixed(3)} | ${f.timing.us[k].join(' / ')} |`).join('\n')}

Hidden / missing: p50 **${(f.timing.ms.hidden.p50 / f.timing.ms.missing.p50).toFixed(2)}×**, CPU per query **${(median(f.timing.us.hidden) / median(f.timing.us.missing)).toFixed(2)}×**.
`;
writeResults('visibility-cost', when, { policy: POLICY, rounds: ROUNDS, seconds: SECONDS, ...f, qpsRatio, cpuRatio }, md);
console.log(md);
