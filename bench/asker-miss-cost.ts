// npm run bench:nodecache-miss-cost (issue 26): what passing the asker on costs node-cache a miss. Two
// node-caches with the same Corefile shape (cluster.local forwarded over TCP, as the node-local
// template does) in front of one kube-dns: one forwards to the cluster DNS Service's address, so it
// puts each asker's address on the query (an EDNS Client Subnet) and keeps a reply scoped to an asker
// for it alone; the other forwards to another address of the same kube-dns and passes nothing on.
// Made-up cluster names from 8 askers at a fixed rate (every one a miss in node-cache, NXDOMAIN from
// kube-dns), rounds alternated: node-cache's CPU per query, user + system.
// Writes bench/results/nodecache-miss-cost-<date>.{json,md}.

import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { cpuPerQuery, nodeCacheArgv, repoRoot, startKubeDns, stopper, waitForLine } from './servers.ts';
import { commitOf, inTempDir, writeResults } from './report.ts';
import { median } from './stats.ts';
import { freePort } from '../test/helpers/ports.ts';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATE = 400;
const ASKERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${11 + i}`);
/** kube-dns listens on every loopback address: the Service's, and another one for the node-cache that passes nothing. */
const SERVICE_IP = '127.0.0.1';
const OTHER_IP = '127.0.0.2';

type Side = 'ecs' | 'plain';

async function startNodeCache(dir: string, side: Side, kubeDnsPort: number): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const listen = side === 'ecs' ? '127.0.0.31' : '127.0.0.32';
  const upstream = side === 'ecs' ? SERVICE_IP : OTHER_IP;
  const corefile = `cluster.local:${port} {\n    errors\n    cache {\n        success 9984 30\n        denial 9984 5\n    }\n    bind ${listen}\n    forward . ${upstream}:${kubeDnsPort} {\n        force_tcp\n    }\n}\n`;
  const [bin, ...args] = nodeCacheArgv(repoRoot, dir, listen, corefile, ['-upstreamsvc', 'kube-dns-upstream', `-metrics-listen-address=127.0.0.1:${await freePort()}`]);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBE_DNS_UPSTREAM_SERVICE_HOST: SERVICE_IP, KUBE_DNS_UPSTREAM_SERVICE_PORT: '53' } });
  await waitForLine(child, /DNS listening/, `node-cache (${side})`);
  return { port, pid: child.pid!, stop: stopper(child) };
}

async function round(address: string, port: number, pid: number, files: string[]): Promise<number> {
  const r = await cpuPerQuery(pid, () => Promise.all(ASKERS.map((a, i) => dnsperf(port, files[i], SECONDS, ['-s', address, '-a', a, '-Q', String(RATE), '-n', '1'], '0'))));
  if (r.lost > 0) console.log(`    ${r.lost} of ${r.completed + r.lost} lost`);
  return r.us;
}

async function main(dir: string): Promise<Record<Side, number[]>> {
  const c = makeCluster(16);
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  const kd = await startKubeDns(dir, join(dir, 'cluster.json'), ['--dns-bind-address=0.0.0.0']);
  const caches = { ecs: await startNodeCache(dir, 'ecs', kd.port), plain: await startNodeCache(dir, 'plain', kd.port) };
  await run('taskset', ['-a', '-cp', '0', String(kd.pid)]);
  for (const s of Object.values(caches)) await run('taskset', ['-a', '-cp', '1', String(s.pid)]);
  const us: Record<Side, number[]> = { ecs: [], plain: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 === 0 ? (['ecs', 'plain'] as const) : (['plain', 'ecs'] as const)) {
        const files = ASKERS.map((_, i) => {
          const f = join(dir, `${k}-${r}-${i}`);
          writeFileSync(f, Array.from({ length: RATE * (SECONDS + 1) }, (_, n) => `m${k}${r}-${i}-${n}.default.svc.cluster.local A`).join('\n') + '\n');
          return f;
        });
        us[k].push(await round(k === 'ecs' ? '127.0.0.31' : '127.0.0.32', caches[k].port, caches[k].pid, files));
      }
      console.log(`  round ${r + 1}: with the asker passed on ${us.ecs[r].toFixed(2)} µs/query, without ${us.plain[r].toFixed(2)}`);
    }
  } finally {
    for (const s of Object.values(caches)) await s.stop();
    await kd.stop();
  }
  return us;
}

const when = new Date().toISOString();
const us = await inTempDir('kdt-bench-ncmiss-', main);
const ratio = median(us.ecs) / median(us.plain);
const md = `# What passing the asker on costs node-cache a miss (${when})

${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs, load average at start ${loadavg()[0].toFixed(2)}. Two node-caches (CPU 1, alone), \`cluster.local\` with \`cache\` and \`forward … { force_tcp }\` as the node-local template, in front of one kube-dns (one thread, CPU 0, with dnsperf): one forwarding to the cluster DNS Service's address (the asker's address passed on as an EDNS Client Subnet), one to another address of the same kube-dns (nothing passed on). Made-up cluster names (every one a miss, NXDOMAIN) from 8 askers at ${RATE}/s each (dnsperf -a), ${SECONDS} s a round, ${ROUNDS} rounds alternated; node-cache's CPU per query, user + system.

| node-cache | CPU µs/query, per round | median |
|---|---|---|
| asker passed on | ${us.ecs.map((v) => v.toFixed(2)).join(' / ')} | ${median(us.ecs).toFixed(2)} |
| nothing passed on | ${us.plain.map((v) => v.toFixed(2)).join(' / ')} | ${median(us.plain).toFixed(2)} |

Passed on / not: **${ratio.toFixed(3)}×**.
`;
writeResults('nodecache-miss-cost', when, { rate: RATE, seconds: SECONDS, us, ratio }, md);
console.log(md);
