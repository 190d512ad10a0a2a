// --workers=auto: as many answering threads as the process may keep busy (its CPU affinity, its
// cgroup's CPU quota rounded up, as Go 1.25 sets GOMAXPROCS) and its cgroup's memory limit allows,
// never more than MAX_AUTO_WORKERS (the most that has been measured to scale). cgroup v2 and v1 alike;
// each limit is the tightest of the process's cgroup and its ancestors (a pod's limit sits above the
// container's).

const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';

export const MAX_AUTO_WORKERS = 8;
/** cgroup v1 writes "no limit" as a number near 2^63; anything this large is none. */
const NO_LIMIT = 2 ** 60;

/** What bounds the thread count. null: no limit of that kind. */
export interface ProcessLimits {
  /** CPUs in the affinity mask. */
  cpus: number;
  /** The CPU quota in CPUs (quota / period), fractional. */
  cpuQuota: number | null;
  memoryBytes: number | null;
}

/** What a program needs: its RSS at one thread with a large cluster, and what each more thread adds. */
export interface ThreadBudget {
  baseBytes: number;
  perThreadBytes: number;
}

export interface AutoWorkers {
  workers: number;
  /** For the start-up log line: what decided it. */
  why: string;
}

/** The thread count for `limits` and `budget`, and why. */
export function autoWorkers(limits: ProcessLimits, budget: ThreadBudget): AutoWorkers {
  const byQuota = limits.cpuQuota === null ? Infinity : Math.max(1, Math.ceil(limits.cpuQuota));
  const byMemory = limits.memoryBytes === null ? Infinity : 1 + Math.max(0, Math.floor((limits.memoryBytes - budget.baseBytes) / budget.perThreadBytes));
  const bounds: [string, number][] = [
    [`${limits.cpus} CPUs in the affinity mask`, limits.cpus],
    [`a CPU quota of ${limits.cpuQuota}`, byQuota],
    [`a memory limit of ${mib(limits.memoryBytes ?? 0)} MiB (${mib(budget.baseBytes)} MiB and ${mib(budget.perThreadBytes)} MiB a thread)`, byMemory],
    [`at most ${MAX_AUTO_WORKERS}`, MAX_AUTO_WORKERS],
  ];
  const [why, workers] = bounds.reduce((min, b) => (b[1] < min[1] ? b : min));
  return { workers: Math.max(1, workers), why };
}

function mib(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}

/** Where to read: the roots exist for tests (a cgroup tree of files made in a temp dir). */
export interface LimitSources {
  procSelfCgroup?: string;
  cgroupRoot?: string;
  cpus?: () => number;
}

/** This process's limits, read from /proc/self/cgroup and the cgroup filesystem; unreadable: none. */
export function readProcessLimits(src: LimitSources = {}): ProcessLimits {
  const root = src.cgroupRoot ?? '/sys/fs/cgroup';
  const paths = cgroupPaths(readText(src.procSelfCgroup ?? '/proc/self/cgroup') ?? '');
  const v2 = paths.get('');
  const cpus = (src.cpus ?? availableParallelism)();
  if (v2 !== undefined && existsSync(join(root, 'cgroup.controllers'))) {
    return {
      cpus,
      cpuQuota: tightest(root, v2, (dir) => cpuMax(readText(join(dir, 'cpu.max')))),
      memoryBytes: tightest(root, v2, (dir) => bytes(readText(join(dir, 'memory.max')))),
    };
  }
  const cpuPath = paths.get('cpu') ?? '/';
  const cpuRoot = join(root, existsSync(join(root, 'cpu,cpuacct')) ? 'cpu,cpuacct' : 'cpu');
  return {
    cpus,
    cpuQuota: tightest(cpuRoot, cpuPath, (dir) => cfsQuota(readText(join(dir, 'cpu.cfs_quota_us')), readText(join(dir, 'cpu.cfs_period_us')))),
    memoryBytes: tightest(join(root, 'memory'), paths.get('memory') ?? '/', (dir) => bytes(readText(join(dir, 'memory.limit_in_bytes')))),
  };
}

/** controller → path from /proc/self/cgroup ("0::/path" is v2's, keyed ""). */
function cgroupPaths(text: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m === null) continue;
    for (const controller of m[1].split(',')) paths.set(controller.replace(/^name=/, ''), m[2]);
  }
  return paths;
}

/**
 * The smallest limit from the process's cgroup up to the mount's root. In a container the path may
 * be the host's, not under the mount (cgroup v1 without a cgroup namespace): then the mount's root is
 * the container's own cgroup.
 */
function tightest(mount: string, path: string, limitOf: (dir: string) => number | null): number | null {
  let dir = join(mount, path);
  if (!existsSync(dir)) dir = mount;
  let min: number | null = null;
  for (;;) {
    const limit = limitOf(dir);
    if (limit !== null && (min === null || limit < min)) min = limit;
    if (dir === mount || !dir.startsWith(mount)) return min;
    dir = dirname(dir);
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** v2 cpu.max: "max 100000" or "150000 100000". */
function cpuMax(text: string | null): number | null {
  const [quota, period] = (text ?? 'max').split(/\s+/);
  return quota === 'max' ? null : cpus(Number(quota), Number(period ?? 100000));
}

/** v1: cfs_quota_us -1 is none. */
function cfsQuota(quota: string | null, period: string | null): number | null {
  return quota === null || Number(quota) < 0 ? null : cpus(Number(quota), Number(period ?? 100000));
}

function cpus(quota: number, period: number): number | null {
  return quota > 0 && period > 0 ? quota / period : null;
}

function bytes(text: string | null): number | null {
  if (text === null || text === 'max') return null;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 && n < NO_LIMIT ? n : null;
}

/** `requested` (--workers: 0 is auto) as a thread count, and why, for the start-up log line. */
export function resolveWorkers(requested: number, budget: ThreadBudget, limits: () => ProcessLimits = readProcessLimits): AutoWorkers {
  return requested > 0 ? { workers: requested, why: '--workers' } : autoWorkers(limits(), budget);
}
