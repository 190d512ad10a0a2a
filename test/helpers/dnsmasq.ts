// A real dnsmasq (Debian dnsmasq-base) on 127.0.0.1 serving fixed names: the upstream that tests
// forward to. Each instance has its own port, hosts file and pid file, and is stopped in t.teardown.
// It runs as users run it: started as root, it drops to its unprivileged user before it reads the
// hosts file, so the file's folder must be readable by others (mkdtemp makes it 0700).

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { Test } from 'tap';
import { freePort } from './ports.ts';

export const DNSMASQ = '/usr/sbin/dnsmasq';

export interface Dnsmasq {
  port: number;
  pid: number;
}

/**
 * `hosts`: lines of a hosts file ("192.0.2.53 www.example.com"); `extra`: more dnsmasq options
 * (e.g. `--address=/example.test/192.0.2.7`). Resolves once dnsmasq has read the hosts file.
 */
export async function startDnsmasq(t: Test, hosts: string[], extra: string[] = []): Promise<Dnsmasq> {
  const dir = dnsmasqReadableDir('kdt-dnsmasq-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hostsFile = join(dir, 'hosts');
  writeFileSync(hostsFile, hosts.join('\n') + '\n');
  // The free port can be taken again before dnsmasq binds it: then try another.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const started = await run(t, dnsmasqHostsArgs(port, hostsFile, join(dir, `dnsmasq-${port}.pid`), extra), hostsFile);
    if (typeof started === 'number') return { port, pid: started };
    if (attempt >= 5 || !/in use/.test(started.log)) throw new Error(`dnsmasq did not start: ${started.log}`);
  }
}

/** A temp folder whose files dnsmasq can still read after it has dropped its privileges. */
export function dnsmasqReadableDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/** dnsmasq serving `hostsFile` on `address` (127.0.0.1):`port` and nothing else, in the foreground, logging to stderr. */
export function dnsmasqHostsArgs(port: number, hostsFile: string, pidFile: string, extra: string[] = [], address = '127.0.0.1'): string[] {
  return ['--keep-in-foreground', '--conf-file=/dev/null', `--port=${port}`, `--listen-address=${address}`, '--bind-interfaces', '--no-resolv', '--no-hosts', `--addn-hosts=${hostsFile}`, `--pid-file=${pidFile}`, '--log-facility=-', ...extra];
}

/** One dnsmasq process: its pid once it has read `hostsFile`, or its log if it stopped first. */
async function run(t: Test, args: string[], hostsFile: string): Promise<number | { log: string }> {
  const child = spawn(DNSMASQ, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  let log = '';
  const guard = setTimeout(() => child.kill('SIGTERM'), 10_000); // never wait forever for the log line
  const ready = await new Promise<boolean>((resolve) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      // "read <file> - N names" comes after "started": the names are being served.
      if (log.includes(`read ${hostsFile} - `)) resolve(true);
      if (/failed to load names/.test(log)) child.kill('SIGTERM');
    });
    void exited.then(() => resolve(false));
  });
  clearTimeout(guard);
  return ready ? child.pid! : { log };
}
