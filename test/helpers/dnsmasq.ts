// A real dnsmasq (Debian dnsmasq-base) on 127.0.0.1 serving fixed names: the upstream that tests
// forward to. Each instance has its own port, pid file and hosts file, and is stopped by pid.

import { mkdtempSync, writeFileSync } from 'node:fs';
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

/** `hosts`: lines of a hosts file ("192.0.2.53 www.example.com"); `extra`: more dnsmasq options. */
export async function startDnsmasq(t: Test, hosts: string[], extra: string[] = []): Promise<Dnsmasq> {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-dnsmasq-'));
  writeFileSync(join(dir, 'hosts'), hosts.join('\n') + '\n');
  const port = await freePort();
  const args = ['--keep-in-foreground', '--conf-file=/dev/null', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--no-hosts', `--addn-hosts=${join(dir, 'hosts')}`, `--pid-file=${join(dir, 'pid')}`, '--user=root', '--log-facility=-', ...extra];
  const child = spawn(DNSMASQ, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  // dnsmasq logs "started" once it has bound its sockets.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dnsmasq did not start: ${err}`)), 10_000);
    const check = () => {
      if (/started/.test(err)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr!.on('data', check);
    child.once('exit', () => reject(new Error(`dnsmasq exited: ${err}`)));
  });
  return { port, pid: child.pid! };
}
