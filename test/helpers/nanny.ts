// Starts the real dnsmasq-nanny on loopback with its own config directory, driving either our dnscache
// or the real dnsmasq on a free port; -syncInterval=1s and metrics on a port of its own.

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { DNSMASQ } from './dnsmasq.ts';
import { freePort } from './ports.ts';
import { startProgram, workersArgs } from './process.ts';
import type { Program } from './process.ts';
import { scrape } from './sidecar.ts';
import { dig } from './dig.ts';
import { eventually } from './eventually.ts';

export interface NannyStart {
  /** The child: our dnscache (default) or the real dnsmasq. */
  child?: 'dnscache' | 'dnsmasq';
  /** Initial config files (stubDomains, upstreamNameservers). */
  files?: Record<string, string>;
  /** Nanny flags, before `--`. */
  flags?: string[];
  /** More child args, after the ones that put it on 127.0.0.1:<port>. */
  childArgs?: string[];
  /** Wait until the child says it is serving (default true). */
  ready?: boolean;
  /**
   * The real dnsmasq's user: none given (default) = dnsmasq's own drop from root to nobody, as users
   * run it; 'root' = `--user=root`.
   */
  dnsmasqUser?: 'root';
  /** Pass `--log-facility=-` to the child (default true); without it dnsmasq logs to syslog. */
  logToStderr?: boolean;
}

export interface Nanny {
  program: Program;
  /** The child's DNS port. */
  dnsPort: number;
  metricsPort: number;
  configDir: string;
  /** Writes (or, for null, deletes) config files the way a volume update looks: whole files at once. */
  writeConfig(files: Record<string, string | null>): void;
  /** Every child pid the nanny has logged, oldest first. */
  childPids(): number[];
  /** The value of one metric series (`name` or `name{label="v"}`), NaN when absent. */
  metric(series: string): Promise<number>;
}

export const CHILD_READY = { dnscache: /dnscache: .*listening address=127\.0\.0\.1/, dnsmasq: /dnsmasq: dnsmasq\[\d+\]: started, version/ };

/**
 * The process runs. A zombie does not: it has exited, and an orphan's zombie waits for whatever
 * reaps for PID 1 (in some sandboxes seconds later; kill(pid, 0) still succeeds on it).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

export async function startNanny(t: Test, o: NannyStart = {}): Promise<Nanny> {
  const child = o.child ?? 'dnscache';
  const dir = mkdtempSync(join(tmpdir(), 'kdt-nanny-'));
  // dnsmasq reads its files after dropping to nobody: the test's directory must be open to it.
  chmodSync(dir, 0o755);
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  // An empty resolv file: without upstreams nothing is ever sent past 127.0.0.1.
  const resolvFile = join(dir, 'resolv.conf');
  writeFileSync(resolvFile, '');
  const writeConfig = (files: Record<string, string | null>) => {
    for (const [name, text] of Object.entries(files)) {
      if (text === null) {
        rmSync(join(configDir, name), { force: true });
        continue;
      }
      const tmp = join(configDir, `.${name}.tmp`); // dot-names are skipped by the watcher
      writeFileSync(tmp, text);
      renameSync(tmp, join(configDir, name));
    }
  };
  writeConfig(o.files ?? {});
  const port = await freePort();
  const log = o.logToStderr === false ? [] : ['--log-facility=-'];
  const listen = [`--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', ...log, `--resolv-file=${resolvFile}`];
  const user = o.dnsmasqUser === 'root' ? ['--user=root'] : [];
  const childArgs =
    child === 'dnsmasq'
      ? ['-k', '--conf-file=/dev/null', `--pid-file=${join(dir, 'dnsmasq.pid')}`, ...user, '--no-hosts', ...listen]
      : ['-k', ...listen, ...workersArgs()];
  const program = startProgram(t, 'dnsmasq-nanny', [
    `-configDir=${configDir}`,
    '-syncInterval=1s',
    '-metricsAddress=127.0.0.1:0',
    ...(child === 'dnsmasq' ? [`-dnsmasqExec=${DNSMASQ}`] : []),
    ...(o.flags ?? []),
    '--',
    ...childArgs,
    ...(o.childArgs ?? []),
  ]);
  const childPids = () => [...program.output().matchAll(/child started pid=(\d+)/g)].map((m) => Number(m[1]));
  // After the nanny has stopped (whatever happened): no child of a test may outlive it.
  t.teardown(async () => {
    await program.stop();
    for (const pid of childPids()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const metricsPort = Number((await program.waitFor(/metrics listening .*port=(\d+)/))[1]);
  if (o.ready !== false && o.logToStderr === false) {
    // No log line to wait for: serving is answering.
    await eventually(() => dig(port, 'ready.invalid', 'A', ['+time=1', '+tries=1']).then(() => true, () => false), 'the child answers', 15_000);
  } else if (o.ready !== false) await program.waitFor(CHILD_READY[child]);
  return {
    program,
    dnsPort: port,
    metricsPort,
    configDir,
    writeConfig,
    childPids,
    async metric(series) {
      return (await scrape(metricsPort)).get(series) ?? NaN;
    },
  };
}

