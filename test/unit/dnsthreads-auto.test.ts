// --workers=auto: the thread count from the CPUs, the cgroup CPU quota and memory limit (v1 and v2
// trees, written as the kernel shows them), and the flag's values.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { autoWorkers, MAX_AUTO_WORKERS, readProcessLimits, resolveWorkers } from '../../pkg/dnsthreads/auto.ts';
import type { ProcessLimits } from '../../pkg/dnsthreads/auto.ts';
import { parseWorkers } from '../../pkg/flags/workers.ts';
import { kubeDnsThreadBudget } from '../../pkg/kubedns/program.ts';
import { dnscacheThreadBudget } from '../../pkg/dnscache/threads.ts';
import { defaultConfig, parseArgs } from '../../pkg/dnscache/args.ts';

const KUBE_DNS_16MI = kubeDnsThreadBudget(16 * 2 ** 20);
const MiB = 2 ** 20;
const none: ProcessLimits = { cpus: 64, cpuQuota: null, memoryBytes: null };

t.test('auto: the fewest of the CPUs, the quota rounded up, the memory limit and 8', async (t) => {
  const budget = { baseBytes: 100 * MiB, perThreadBytes: 20 * MiB };
  t.equal(autoWorkers({ ...none, cpus: 2 }, budget).workers, 2, 'affinity');
  t.match(autoWorkers({ ...none, cpus: 2 }, budget).why, /2 CPUs in the affinity mask/);
  t.equal(autoWorkers(none, budget).workers, MAX_AUTO_WORKERS, 'a big node without limits: 8');
  t.equal(autoWorkers({ ...none, cpuQuota: 1.5 }, budget).workers, 2, 'a quota of 1.5 CPUs: 2 threads');
  t.equal(autoWorkers({ ...none, cpuQuota: 0.1 }, budget).workers, 1, 'a tenth of a CPU: 1');
  t.equal(autoWorkers({ ...none, memoryBytes: 170 * MiB }, budget).workers, 4, '100 MiB + 3 × 20 MiB fit in 170');
  t.match(autoWorkers({ ...none, memoryBytes: 170 * MiB }, budget).why, /memory limit of 170 MiB/);
  t.equal(autoWorkers({ ...none, memoryBytes: 64 * MiB }, budget).workers, 1, 'below the base: still one');
});

t.test('the budgets: a thread costs 20 MiB and an answer cache of --cache-bytes (16Mi): the manifest kube-dns limit (256Mi) allows 4, the original 170Mi 1', async (t) => {
  t.equal(autoWorkers({ ...none, memoryBytes: 256 * MiB }, KUBE_DNS_16MI).workers, 4, '144 MiB + 3 × 36 MiB');
  t.equal(autoWorkers({ ...none, memoryBytes: 170 * MiB }, KUBE_DNS_16MI).workers, 1);
  t.equal(autoWorkers({ ...none, memoryBytes: 170 * MiB }, kubeDnsThreadBudget(4 * MiB)).workers, 2, '--cache-bytes=4Mi: 144 MiB + 24 MiB');
  const dnscache = dnscacheThreadBudget(defaultConfig());
  t.equal(autoWorkers({ ...none, memoryBytes: 256 * MiB }, dnscache).workers, 5, 'dnscache with 16 MiB of cache: 96 MiB + 4 × 36 MiB');
});

t.test('resolveWorkers: a number is taken as given, 0 is auto', async (t) => {
  const limits = () => ({ ...none, cpus: 3 });
  t.same(resolveWorkers(5, KUBE_DNS_16MI, limits), { workers: 5, why: '--workers' });
  t.equal(resolveWorkers(0, KUBE_DNS_16MI, limits).workers, 3);
});

t.test('the flag: auto or 1-256', async (t) => {
  t.equal(parseWorkers('auto'), 0);
  t.equal(parseWorkers('4'), 4);
  for (const bad of ['0', '257', '-1', '2.5', 'two', '']) t.equal(parseWorkers(bad), null, JSON.stringify(bad));
  t.equal(parseArgs(['--workers=auto']).workers, 0, 'dnscache: auto');
  t.equal(parseArgs([]).workers, 0, 'dnscache: auto by default');
  t.throws(() => parseArgs(['--workers=0']), /bad value for --workers: "0" \(auto or 1-256\)/);
});

function cgroupTree(t: Test, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kdt-cgroup-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), `${text}\n`);
  }
  return root;
}

/** The limits read from a cgroup tree of `files` ('self.cgroup' is /proc/self/cgroup, 'fs/…' the mount) with `cpus` in the mask. */
function limitsOf(t: Test, files: Record<string, string>, cpus: number): ProcessLimits {
  const root = cgroupTree(t, files);
  return readProcessLimits({ procSelfCgroup: join(root, 'self.cgroup'), cgroupRoot: join(root, 'fs'), cpus: () => cpus });
}

t.test('cgroup v2: cpu.max and memory.max, the tightest of the cgroup and its parents', async (t) => {
  const limits = limitsOf(t, {
    'self.cgroup': '0::/kubepods/pod1/ctr',
    'fs/cgroup.controllers': 'cpu memory',
    'fs/kubepods/pod1/cpu.max': '250000 100000',
    'fs/kubepods/pod1/memory.max': String(300 * MiB),
    'fs/kubepods/pod1/ctr/cpu.max': 'max 100000',
    'fs/kubepods/pod1/ctr/memory.max': String(256 * MiB),
  }, 16);
  t.same(limits, { cpus: 16, cpuQuota: 2.5, memoryBytes: 256 * MiB });
  t.equal(autoWorkers(limits, KUBE_DNS_16MI).workers, 3, 'a quota of 2.5 CPUs');
});

t.test('cgroup v2 in a cgroup namespace ("0::/"): the root\'s files; "max" is no limit', async (t) => {
  const files = { 'self.cgroup': '0::/', 'fs/cgroup.controllers': 'cpu memory', 'fs/cpu.max': 'max 100000', 'fs/memory.max': 'max' };
  t.same(limitsOf(t, files, 4), { cpus: 4, cpuQuota: null, memoryBytes: null });
});

t.test('cgroup v1: cfs quota and memory.limit_in_bytes; a host path not under the mount reads the mount\'s root', async (t) => {
  const files = {
    'self.cgroup': '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc',
    'fs/cpu,cpuacct/cpu.cfs_quota_us': '100000',
    'fs/cpu,cpuacct/cpu.cfs_period_us': '100000',
    'fs/memory/memory.limit_in_bytes': String(128 * MiB),
  };
  t.same(limitsOf(t, files, 8), { cpus: 8, cpuQuota: 1, memoryBytes: 128 * MiB });
});

t.test('cgroup v1 unlimited (-1, ~2^63) and unreadable files: no limits', async (t) => {
  const files = {
    'self.cgroup': '4:memory:/a\n3:cpu:/a',
    'fs/cpu/a/cpu.cfs_quota_us': '-1',
    'fs/memory/a/memory.limit_in_bytes': '9223372036854771712',
  };
  t.same(limitsOf(t, files, 2), { cpus: 2, cpuQuota: null, memoryBytes: null });
  t.same(limitsOf(t, {}, 2), { cpus: 2, cpuQuota: null, memoryBytes: null }, 'nothing readable');
});
