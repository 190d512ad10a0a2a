// The servers a benchmark compares, started the same way tests start them, each with its own port
// and files, stopped by pid.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OutputLines } from '../test/helpers/log-lines.ts';
import { dnsmasqHostsArgs } from '../test/helpers/dnsmasq.ts';
import type { PerfResult } from './dnsperf.ts';

export const repoRoot = fileURLToPath(new URL('../', import.meta.url));

export interface Running {
  name: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Resolves with the first match of `re` in the child's output, its log entries read as plain lines
 * (`<time> <severity> <logger>: <msg> key=value`, whichever format the program writes), as tests read them.
 */
export function waitForLine(child: ChildProcess, re: RegExp, what: string, ms = 120_000): Promise<RegExpMatchArray> {
  const lines = new OutputLines();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: timed out waiting for ${re}\n${lines.plain().slice(-2000)}`)), ms);
    const onData = (d: Buffer) => {
      lines.push(d.toString());
      const m = re.exec(lines.plain());
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stderr?.on('data', onData);
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code})\n${lines.plain().slice(-2000)}`)));
  });
}

/** Stops `child` with SIGTERM (SIGKILL after 5 s) and waits for it to exit. */
export function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
}

/**
 * The Node flags a program (kube-dns unless named) runs with in production: those of its bin's shebang
 * line in the build of `root`, so another build compared runs with its own flags.
 */
export function productionNodeFlags(program = 'kube-dns', root = repoRoot): string[] {
  const shebang = readFileSync(join(root, `dist/cmd/${program}/main.js`), 'utf8').split('\n')[0];
  return shebang.replace(/^#!\S*env -S node\s*/, '').split(/\s+/).filter(Boolean);
}

/** A program of `root`'s build as production runs it, for process.execPath: its shebang's Node flags, then its entry. */
export function programArgs(program: string, root = repoRoot): string[] {
  return [...productionNodeFlags(program, root), join(root, `dist/cmd/${program}/main.js`)];
}

/**
 * `--workers=1` for a build of `root` whose default is auto (every bench but bench:scale measures one
 * thread, set against one-threaded dnsmasq); nothing for an older build, which has one thread.
 */
export function oneThread(root = repoRoot): string[] {
  return existsSync(join(root, 'dist/pkg/flags/workers.js')) ? ['--workers=1'] : [];
}

/** kube-dns on `clusterFile`; `root`: a checkout whose dist/ to run (another build, to compare). */
export async function startKubeDns(dir: string, clusterFile: string, extra: string[] = [], root = repoRoot): Promise<Running & { syncMs: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [...programArgs('kube-dns', root), `--cluster-file=${clusterFile}`, '--dns-bind-address=127.0.0.1', '--http-bind-address=127.0.0.1', '--dns-port=0', '--healthz-port=0', `--resolv-conf=${join(dir, 'resolv.conf')}`, ...oneThread(root), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = stopper(child);
  try {
    const m = await waitForLine(child, /DNS listening .*port=(\d+)/, 'kube-dns');
    await waitForLine(child, /initial sync done/, 'kube-dns');
    return { name: 'kube-dns', port: Number(m[1]), pid: child.pid!, stop, syncMs: Date.now() - started };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** dnsmasq answering the names of `hostsFile`; `extra` arguments are appended (e.g. --local-ttl). */
export async function startDnsmasq(dir: string, hostsFile: string, port: number, extra: string[] = []): Promise<Running> {
  const child = spawn('/usr/sbin/dnsmasq', dnsmasqHostsArgs(port, hostsFile, join(dir, 'dnsmasq.pid'), extra), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = stopper(child);
  try {
    await waitForLine(child, /read .* (names|addresses)/, "dnsmasq");
    return { name: 'dnsmasq', port, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface Memory {
  rssMiB: number;
  anonMiB: number;
  fileMiB: number;
}

/** A process's resident memory in MiB: in all (VmRSS), anonymous and file-backed. */
export function memoryMiB(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rssMiB: kb('VmRSS'), anonMiB: kb('RssAnon'), fileMiB: kb('RssFile') };
}

/** Resident set size of a process in MiB (VmRSS). */
export function rssMiB(pid: number): number {
  return memoryMiB(pid).rssMiB;
}

/**
 * node-cache of the checkout at `root` as the manifest runs it on `localIps`, less its interface and
 * rules, serving `corefile` as its base; its files in a fresh folder under `dir`.
 */
export function nodeCacheArgv(root: string, dir: string, localIps: string, corefile: string, extra: string[] = []): string[] {
  const own = mkdtempSync(join(dir, 'node-cache-'));
  mkdirSync(join(own, 'kube-dns'), { recursive: true });
  writeFileSync(join(own, 'Corefile.base'), corefile);
  writeFileSync(join(own, 'resolv.conf'), 'nameserver 127.0.0.1\n');
  return [process.execPath, ...programArgs('node-cache', root), `-localip=${localIps}`, '-setupinterface=false', '-setupiptables=false', `-basecorefile=${join(own, 'Corefile.base')}`, `-corefile=${join(own, 'Corefile')}`, `-kubednscm=${join(own, 'kube-dns')}`, `-resolvconf=${join(own, 'resolv.conf')}`, ...extra];
}

/** CPU time a process has used so far, in milliseconds (utime and stime of /proc/<pid>/stat). */
export function cpuTimeMs(pid: number): { user: number; sys: number } {
  // Fields after the command name: state is [0], utime [11], stime [12], in clock ticks (USER_HZ, 100 on Linux).
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(f[11]) * 10, sys: Number(f[12]) * 10 };
}

/** `pid`'s CPU time (user + system) while `load` ran, in µs per query its dnsperf runs completed; the runs, what they completed and lost. */
export async function cpuPerQuery(pid: number, load: () => Promise<PerfResult[]>): Promise<{ us: number; completed: number; lost: number; runs: PerfResult[] }> {
  const before = cpuTimeMs(pid);
  const runs = await load();
  const after = cpuTimeMs(pid);
  const completed = runs.reduce((n, r) => n + r.completed, 0);
  const lost = runs.reduce((n, r) => n + r.lost, 0);
  return { us: ((after.user + after.sys - before.user - before.sys) * 1000) / Math.max(1, completed), completed, lost, runs };
}

/** The bare-socket ceiling (bench/bare-udp.ts) on `port`, answering the names of `hostsFile`. */
export async function startBareUdp(hostsFile: string, port: number): Promise<Running> {
  const child = spawn(process.execPath, [...productionNodeFlags(), join(repoRoot, 'bench/bare-udp.ts'), String(port), hostsFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = stopper(child);
  try {
    await waitForLine(child, /bare UDP server/, 'bare-udp');
    return { name: 'bare-node', port, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
