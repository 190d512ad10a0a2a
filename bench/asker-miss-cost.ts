// npm run bench:asker-miss-cost (issue 26): what passing the asker on costs our caches a miss, each
// with it and without it in front of one kube-dns:
//  - node-cache, two with the same Corefile shape (cluster.local forwarded over TCP, as the node-local
//    template does): one forwards to the cluster DNS Service's address, so it puts each asker's address
//    on the query (an EDNS Client Subnet) and keeps a reply scoped to an asker for it alone; the other
//    forwards to another address of the same kube-dns and passes nothing on;
//  - dnscache, two with the arguments dnsmasq-nanny passes: one with --add-subnet=32,128 (as the
//    manifest runs it for autopath), one without.
// Made-up cluster names from 8 askers at a fixed rate (every one a miss in the cache, NXDOMAIN from
// kube-dns), rounds alternated: each cache's CPU per query, user + system.
// With a baseline checkout (`npm run bench:asker-miss-cost -- <checkout with dist/ built>`, or
// BENCH_BASELINE), dnscache's second side is that build's dnscache, with --add-subnet=32,128 too: the
// cost against before, where the manifest passed the asker on already. BENCH_PROGRAMS: a comma list
// (node-cache,dnscache).
// Writes bench/results/asker-miss-cost-<date>.{json,md}.

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { dnsperf } from './dnsperf.ts';
import { cpuPerQuery, nodeCacheArgv, repoRoot, startKubeDns, stopper, waitForLine } from './servers.ts';
import { cacheArgs, startDnscacheWith } from './dnscache-servers.ts';
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
const ALL_PROGRAMS = ['node-cache', 'dnscache'] as const;
type Program = (typeof ALL_PROGRAMS)[number];
const PROGRAMS = ALL_PROGRAMS.filter((p) => process.env.BENCH_PROGRAMS?.split(',').includes(p) ?? true);
const baseline = process.argv[2] ?? process.env.BENCH_BASELINE;
/** The baseline's commit, read once (every round's line names it). */
const baselineCommit = baseline === undefined ? '' : commitOf(baseline).split(' ')[0];

interface Cache {
  address: string;
  port: number;
  pid: number;
  stop: () => Promise<void>;
}

/** Each program's address on each side: its own, so that its askers' packets reach it alone. */
const LISTEN: Record<Program, Record<Side, string>> = {
  'node-cache': { ecs: '127.0.0.31', plain: '127.0.0.32' },
  dnscache: { ecs: '127.0.0.33', plain: '127.0.0.34' },
};

async function startNodeCache(dir: string, side: Side, kubeDnsPort: number): Promise<Cache> {
  const port = await freePort();
  const listen = LISTEN['node-cache'][side];
  const upstream = side === 'ecs' ? SERVICE_IP : OTHER_IP;
  const corefile = `cluster.local:${port} {\n    errors\n    cache {\n        success 9984 30\n        denial 9984 5\n    }\n    bind ${listen}\n    forward . ${upstream}:${kubeDnsPort} {\n        force_tcp\n    }\n}\n`;
  const [bin, ...args] = nodeCacheArgv(repoRoot, dir, listen, corefile, ['-upstreamsvc', 'kube-dns-upstream', `-metrics-listen-address=127.0.0.1:${await freePort()}`]);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBE_DNS_UPSTREAM_SERVICE_HOST: SERVICE_IP, KUBE_DNS_UPSTREAM_SERVICE_PORT: '53' } });
  await waitForLine(child, /DNS listening/, `node-cache (${side})`);
  return { address: listen, port, pid: child.pid!, stop: stopper(child) };
}

async function startDnscache(dir: string, side: Side, kubeDnsPort: number): Promise<Cache> {
  const port = await freePort();
  const address = LISTEN.dnscache[side];
  const own = mkdtempSync(join(dir, 'dnscache-'));
  const args = cacheArgs(port, kubeDnsPort, join(own, 'pid'), address);
  const passesOn = side === 'ecs' || baseline !== undefined;
  const running = await startDnscacheWith(passesOn ? [...args, '--add-subnet=32,128'] : args, port, [], side === 'plain' && baseline !== undefined ? baseline : repoRoot);
  return { address, port, pid: running.pid, stop: running.stop };
}

const START: Record<Program, typeof startNodeCache> = { 'node-cache': startNodeCache, dnscache: startDnscache };

async function round(address: string, port: number, pid: number, files: string[]): Promise<number> {
  const r = await cpuPerQuery(pid, () => Promise.all(ASKERS.map((a, i) => dnsperf(port, files[i], SECONDS, ['-s', address, '-a', a, '-Q', String(RATE), '-n', '1'], '0'))));
  if (r.lost > 0) console.log(`    ${r.lost} of ${r.completed + r.lost} lost`);
  return r.us;
}

/** What a side is: with a baseline, dnscache's second side is that build, passing the asker on too. */
const sideName = (p: Program, side: Side) =>
  p === 'dnscache' && baseline !== undefined ? (side === 'ecs' ? 'this build, asker passed on' : `${baselineCommit}, asker passed on`) : side === 'ecs' ? 'asker passed on' : 'nothing passed on';
type Figures = Record<Program, Record<Side, number[]>>;

async function main(dir: string): Promise<Figures> {
  const c = makeCluster(16);
  writeFileSync(join(dir, 'cluster.json'), c.yaml);
  const kd = await startKubeDns(dir, join(dir, 'cluster.json'), ['--dns-bind-address=0.0.0.0']);
  const us = { 'node-cache': { ecs: [], plain: [] }, dnscache: { ecs: [], plain: [] } } as Figures;
  try {
    await run('taskset', ['-a', '-cp', '0', String(kd.pid)]);
    for (const program of PROGRAMS) {
      const caches = { ecs: await START[program](dir, 'ecs', kd.port), plain: await START[program](dir, 'plain', kd.port) };
      try {
        for (const s of Object.values(caches)) await run('taskset', ['-a', '-cp', '1', String(s.pid)]);
        for (let r = 0; r < ROUNDS; r++) {
          for (const k of r % 2 === 0 ? (['ecs', 'plain'] as const) : (['plain', 'ecs'] as const)) {
            const files = ASKERS.map((_, i) => {
              const f = join(dir, `${program}-${k}-${r}-${i}`);
              writeFileSync(f, Array.from({ length: RATE * (SECONDS + 1) }, (_, n) => `m${program[0]}${k}${r}-${i}-${n}.default.svc.cluster.local A`).join('\n') + '\n');
              return f;
            });
            us[program][k].push(await round(caches[k].address, caches[k].port, caches[k].pid, files));
          }
          console.log(`  ${program} round ${r + 1}: ${sideName(program, 'ecs')} ${us[program].ecs[r].toFixed(2)} µs/query, ${sideName(program, 'plain')} ${us[program].plain[r].toFixed(2)}`);
        }
      } finally {
        for (const s of Object.values(caches)) await s.stop();
      }
    }
  } finally {
    await kd.stop();
  }
  return us;
}

const when = new Date().toISOString();
const us = await inTempDir('kdt-bench-askermiss-', main);
const ratios = Object.fromEntries(PROGRAMS.map((p) => [p, median(us[p].ecs) / median(us[p].plain)])) as Record<Program, number>;
const rows = PROGRAMS.flatMap((p) => [
  `| ${p} | ${sideName(p, 'ecs')} | ${us[p].ecs.map((v) => v.toFixed(2)).join(' / ')} | ${median(us[p].ecs).toFixed(2)} | **${ratios[p].toFixed(3)}×** |`,
  `| ${p} | ${sideName(p, 'plain')} | ${us[p].plain.map((v) => v.toFixed(2)).join(' / ')} | ${median(us[p].plain).toFixed(2)} | |`,
]);
const dnscaches =
  baseline === undefined
    ? 'one with `--add-subnet=32,128` (as the manifest runs it), one without'
    : "both with `--add-subnet=32,128` (as the manifest runs it): this build's and that of " + baselineCommit;
const nodeCaches = PROGRAMS.includes('node-cache')
  ? `Two node-caches (CPU 1, alone), \`cluster.local\` with \`cache\` and \`forward … { force_tcp }\` as the node-local template: one forwarding to the cluster DNS Service's address (the asker's address passed on as an EDNS Client Subnet), one to another address of the same kube-dns (nothing passed on). `
  : '';
const dnscacheText = PROGRAMS.includes('dnscache') ? `Two dnscaches (CPU 1, alone) with dnsmasq-nanny's arguments and a 10,000-entry cache: ${dnscaches}.` : '';
const md = `# What passing the asker on costs our caches a miss (${when})

${commitOf(repoRoot)}. node ${process.version}, ${cpus().length} CPUs, load average at start ${loadavg()[0].toFixed(2)}. One kube-dns (one thread, CPU 0, with dnsperf). ${nodeCaches}${dnscacheText} Made-up cluster names (every one a miss, NXDOMAIN) from 8 askers at ${RATE}/s each (dnsperf -a), ${SECONDS} s a round, ${ROUNDS} rounds alternated; each cache's CPU per query, user + system.

| cache | | CPU µs/query, per round | median | first / second |
|---|---|---|---|---|
${rows.join('\n')}
`;
writeResults('asker-miss-cost', when, { rate: RATE, seconds: SECONDS, us, ratios }, md);
console.log(md);
