// The two caches the dnscache benchmark compares, started on the same dnsmasq arguments (those a
// dnsmasq-nanny would pass), each on its own port with its own pid file, in front of one upstream.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { oneThread, programArgs, repoRoot, stopper, waitForLine } from './servers.ts';
import type { Running } from './servers.ts';

/** The arguments both caches get: dnsmasq's spelling, one upstream, a 10,000-entry cache; on 127.0.0.1 unless `address` says. */
export function cacheArgs(port: number, upstreamPort: number, pidFile: string, address = '127.0.0.1'): string[] {
  return ['-k', `--port=${port}`, `--listen-address=${address}`, '--bind-interfaces', '--no-resolv', '--cache-size=10000', `--server=127.0.0.1#${upstreamPort}`, '--log-facility=-', `--pid-file=${pidFile}`];
}

/**
 * dnscache from the built entry with its production Node flags. `nodeFlags` are added to those
 * (e.g. --cpu-prof); the profile is written when it exits on stop(). `root`: a checkout whose dist/
 * to run (another build, to compare).
 */
export async function startDnscache(dir: string, port: number, upstreamPort: number, nodeFlags: string[] = [], root = repoRoot): Promise<Running> {
  const own = mkdtempSync(join(dir, 'dnscache-'));
  return startDnscacheWith(cacheArgs(port, upstreamPort, join(own, 'pid')), port, nodeFlags, root);
}

/** dnscache with exactly `args` (listening on `port`), resolved once it listens. */
export async function startDnscacheWith(args: string[], port: number, nodeFlags: string[] = [], root = repoRoot): Promise<Running> {
  const child = spawn(process.execPath, [...nodeFlags, ...programArgs('dnscache', root), ...oneThread(root), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = stopper(child);
  try {
    await waitForLine(child, /listening address=\S+ port=\d+/, 'dnscache');
    return { name: 'dnscache', port, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A second, real dnsmasq as the cache, plus the arguments a bare dnsmasq needs in a test box. */
export async function startDnsmasqCache(dir: string, port: number, upstreamPort: number): Promise<Running> {
  const own = join(dir, 'dnsmasq-cache');
  mkdirSync(own, { recursive: true });
  const child = spawn('/usr/sbin/dnsmasq', [...cacheArgs(port, upstreamPort, join(own, 'pid')), '--conf-file=/dev/null', '--no-hosts'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = stopper(child);
  try {
    // Logged after the listeners are bound.
    await waitForLine(child, /using nameserver/, 'dnsmasq (cache)');
    return { name: 'dnsmasq', port, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
