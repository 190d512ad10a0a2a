// --workers=auto (the default) as a pod gets it: the answering threads follow the CPU affinity
// (taskset), the cgroup's CPU quota and its memory limit (a cgroup this test makes and removes), for
// dnscache and kube-dns. Each case reads the count and what decided it from the start-up line.

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { startProgram } from '../helpers/process.ts';
import { service, startKubeDns, yamlDocs } from '../helpers/kubedns.ts';

const MiB = 2 ** 20;
const CPUS = Math.min(availableParallelism(), 8);

async function dnscacheThreads(t: Test, wrap: string[] = []): Promise<{ threads: number; by: string }> {
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', '--workers=auto'], {}, wrap);
  const m = await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+) .*threads=(\d+) threadsBy="([^"]*)"/);
  await p.stop();
  return { threads: Number(m[2]), by: m[3] };
}

/** A cgroup v1 child of this process's `controller` cgroup with `files` written; removed at teardown. null: none can be made here. */
function cgroupV1(t: Test, controller: string, files: Record<string, string>): string | null {
  const line = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.split(':')[1]?.split(',').includes(controller));
  const mount = ['/sys/fs/cgroup', controller].join('/');
  if (line === undefined || !existsSync(mount)) return null;
  const dir = join(mount, line.split(':')[2], `kdt-auto-${process.pid}-${controller}`);
  try {
    mkdirSync(dir);
  } catch {
    return null;
  }
  t.teardown(() => rmdirSync(dir));
  for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), value);
  return dir;
}

/** `argv` run inside `dir` (its pid written to cgroup.procs first). */
function inCgroup(dir: string): string[] {
  return ['sh', '-c', `echo $$ > ${dir}/cgroup.procs && exec "$@"`, 'sh'];
}

t.test('dnscache: as many threads as CPUs the process may use, at most 8', async (t) => {
  t.same(await dnscacheThreads(t), { threads: CPUS, by: CPUS === 8 ? 'at most 8' : `${CPUS} CPUs in the affinity mask` });
});

t.test('dnscache under taskset -c 0: one thread', async (t) => {
  t.same(await dnscacheThreads(t, ['taskset', '-c', '0']), { threads: 1, by: '1 CPUs in the affinity mask' });
});

t.test('dnscache in a cgroup with half a CPU of quota: one thread', async (t) => {
  const dir = cgroupV1(t, 'cpu', { 'cpu.cfs_period_us': '100000', 'cpu.cfs_quota_us': '50000' });
  if (dir === null) return void t.skip('SKIPPING: no cgroup v1 cpu controller to make a cgroup in (cgroup v2 is covered by test/unit/dnsthreads-auto.test.ts)', () => {});
  t.same(await dnscacheThreads(t, inCgroup(dir)), { threads: 1, by: 'a CPU quota of 0.5' });
});

t.test('dnscache in a cgroup with a 100 MiB memory limit: one thread (96 MiB for one, 36 MiB more a thread: 20 and its answer cache)', async (t) => {
  const dir = cgroupV1(t, 'memory', { 'memory.limit_in_bytes': String(100 * MiB) });
  if (dir === null) return void t.skip('SKIPPING: no cgroup v1 memory controller to make a cgroup in', () => {});
  const got = await dnscacheThreads(t, inCgroup(dir));
  t.equal(got.threads, 1);
  t.match(got.by, /^a memory limit of 100 MiB/);
});

t.test('kube-dns: auto follows the affinity too, and answers', async (t) => {
  const clusterYaml = yamlDocs(service('default', 'web', 'clusterIP: 10.96.0.20\nports:\n  - port: 80'));
  const kd = await startKubeDns(t, { clusterYaml, args: ['--workers=auto'], wrap: ['taskset', '-c', '0'] });
  t.match(kd.program.output(), /DNS listening .*threads=1 threadsBy="1 CPUs in the affinity mask"/);
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.20']);
});
