// Where a CPU profile's time goes: the top functions by self time and by total (inclusive) time, and
// the split between our code, lru-cache, Node's own JavaScript and native/GC time.
//
//   node bench/dnscache-profile.ts <file.cpuprofile> [top=25]
//
// Profiles come from `BENCH_DNSCACHE_CPU_PROF=<dir> node bench/dnscache.ts` (dnscache under
// --cpu-prof for the whole run) or any `node --cpu-prof` run.

import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/dnscache-profile.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const n of profile.nodes) {
  byId.set(n.id, n);
  for (const c of n.children ?? []) parent.set(c, n.id);
}

const shortUrl = (url: string): string => url.replace(/^file:\/\/.*?\/(dist|bench|node_modules)\//, '$1/');
const label = (n: ProfileNode): string => {
  const { functionName, url, lineNumber } = n.callFrame;
  return url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName;
};
function area(n: ProfileNode): string {
  const { url, functionName } = n.callFrame;
  if (url === '') return functionName === '(garbage collector)' ? 'GC' : functionName === '(idle)' ? 'idle' : 'native (libuv, syscalls, V8 builtins)';
  if (url.startsWith('node:')) return "Node's JS (dgram, events, timers...)";
  if (url.includes('/node_modules/lru-cache/')) return 'lru-cache';
  return 'ours (dist/, bench/)';
}

const self = new Map<string, number>();
const total = new Map<string, number>();
const areas = new Map<string, number>();
let all = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const us = profile.timeDeltas[i] ?? 0;
  const leaf = byId.get(profile.samples[i]);
  if (leaf === undefined) continue;
  all += us;
  self.set(label(leaf), (self.get(label(leaf)) ?? 0) + us);
  areas.set(area(leaf), (areas.get(area(leaf)) ?? 0) + us);
  const seen = new Set<string>();
  for (let n: ProfileNode | undefined = leaf; n !== undefined; n = byId.get(parent.get(n.id) ?? -1)) {
    const l = label(n);
    if (seen.has(l)) continue;
    seen.add(l);
    total.set(l, (total.get(l) ?? 0) + us);
  }
}

const pct = (us: number): string => `${((100 * us) / all).toFixed(1).padStart(5)}%`;
const table = (title: string, m: Map<string, number>, n: number): void => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`  ${pct(us)}  ${k}`);
};
console.log(`${file}: ${(all / 1e6).toFixed(1)} s sampled`);
table('by area (self time)', areas, 10);
table('top self time', self, top);
table('top total time (inclusive)', total, top);
