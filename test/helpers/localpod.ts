// The real launcher (cmd/local-pod, what `npm start` runs) on free loopback ports with its own copy of
// the example cluster file, an empty config dir and an empty resolv.conf (nothing leaves 127.0.0.1),
// and what the tests read back from it: ports, pids, the banner.

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { OutputLines } from './log-lines.ts';
import { isAlive } from './nanny.ts';
import { freePort } from './ports.ts';
import { outputEnded, repoRoot, startProgram } from './process.ts';
import type { Program } from './process.ts';

export interface PodPorts {
  dns: number;
  kubedns: number;
  healthz: number;
  sidecar: number;
  nanny: number;
}

export interface LocalPodRun {
  program: Program;
  ports: PodPorts;
  clusterFile: string;
  configDir: string;
  /** Replaces a file the way an editor saving it does (write aside, rename over). */
  writeFile(path: string, text: string): void;
  /** Every pid a `child started` line named so far (the three programs and the nanny's dnscache), oldest first. */
  childPids(): number[];
  /** The pids `program` (kube-dns, dnsmasq-nanny, sidecar, or the nanny's dnscache) was started with, oldest first. */
  pidsOf(program: string): number[];
}

/** The pid lines: `local-pod/<program>: child started pid=N` and the nanny's `dnsmasq-nanny/dnscache: ...`. */
const STARTED = /I (?:local-pod|dnsmasq-nanny)\/([a-z-]+): child started pid=(\d+)/g;

export function startedPids(output: string): { program: string; pid: number }[] {
  return [...output.matchAll(STARTED)].map((m) => ({ program: m[1], pid: Number(m[2]) }));
}

/** Five distinct free ports. */
export async function freePorts(): Promise<PodPorts> {
  const got = new Set<number>();
  while (got.size < 5) got.add(await freePort());
  const [dns, kubedns, healthz, sidecar, nanny] = [...got];
  return { dns, kubedns, healthz, sidecar, nanny };
}

export function portFlags(p: PodPorts): string[] {
  return [`--dns-port=${p.dns}`, `--kubedns-port=${p.kubedns}`, `--healthz-port=${p.healthz}`, `--sidecar-port=${p.sidecar}`, `--nanny-metrics-port=${p.nanny}`];
}

/** Starts the launcher; resolves once it printed its banner (every program answers). */
export async function startLocalPod(t: Test, flags: string[] = []): Promise<LocalPodRun> {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-localpod-'));
  const clusterFile = join(dir, 'cluster.yaml');
  copyFileSync(join(repoRoot, 'examples/cluster.yaml'), clusterFile);
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  const resolvConf = join(dir, 'resolv.conf');
  writeFileSync(resolvConf, '');
  const ports = await freePorts();
  const program = startProgram(t, 'local-pod', [
    `--cluster-file=${clusterFile}`,
    `--config-dir=${configDir}`,
    `--resolv-conf=${resolvConf}`,
    ...portFlags(ports),
    ...flags,
  ]);
  const childPids = () => startedPids(program.output()).map((s) => s.pid);
  // After the launcher has stopped, whatever happened: no process of a test may outlive it.
  t.teardown(async () => {
    await program.stop();
    for (const pid of childPids()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  await program.waitFor(/The kube-dns pod is running/, 60_000);
  return {
    program,
    ports,
    clusterFile,
    configDir,
    writeFile(path, text) {
      const aside = join(dir, '.saving');
      writeFileSync(aside, text);
      renameSync(aside, path);
    },
    childPids,
    pidsOf: (name) => startedPids(program.output()).filter((s) => s.program === name).map((s) => s.pid),
  };
}

export interface GroupRun {
  /** The pid of the command started, which leads its own process group. */
  pid: number;
  output(): string;
  /** Resolves with the first match in the output; rejects with the output when the command exits first or after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `file args` in a process group of its own (as a terminal runs a foreground job), so a test can send
 * a signal to the whole group the way Ctrl-C does. Teardown SIGKILLs the group if anything is left.
 */
export function startGroup(t: Test, file: string, args: string[]): GroupRun {
  const child = spawn(file, args, { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = new OutputLines();
  child.stdout!.on('data', (d: Buffer) => lines.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => lines.push(d.toString()));
  const out = () => lines.plain();
  let done = false;
  const exited = outputEnded(child).then((e) => {
    done = true;
    return e;
  });
  const pid = child.pid!;
  t.teardown(async () => {
    if (!done) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(pid), 10_000);
      await exited;
      clearTimeout(timer);
    }
    killGroup(pid);
    for (const s of startedPids(out())) if (isAlive(s.pid)) process.kill(s.pid, 'SIGKILL');
  });
  return {
    pid,
    output: out,
    exited,
    async waitFor(re, ms = 60_000) {
      const until = Date.now() + ms;
      for (;;) {
        const m = re.exec(out());
        if (m) return m;
        if (done) throw new Error(`${file} ${args.join(' ')} exited before printing ${re}:\n${out()}`);
        if (Date.now() > until) throw new Error(`${file} ${args.join(' ')} did not print ${re} within ${ms} ms:\n${out()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // nothing left in the group
  }
}
