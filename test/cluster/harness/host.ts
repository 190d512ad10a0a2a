// What a single-node cluster changes on this machine, each change recorded with its undo: links and
// addresses, routes, iptables rules, sysctls (the kubelet and kube-proxy rewrite some at start, so their
// values before are saved and put back). revert() undoes everything in reverse order and never throws:
// a teardown must get as far as it can.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

/** Runs a command, returning stdout; throws with its stderr. */
export function sh(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
}

/** Runs a command, ignoring failure (for undo steps whose target may already be gone). */
export function shQuiet(cmd: string, args: string[]): void {
  try {
    sh(cmd, args);
  } catch {
    // already undone
  }
}

const sysctlPath = (name: string) => `/proc/sys/${name.replaceAll('.', '/')}`;

export function readSysctl(name: string): string {
  return readFileSync(sysctlPath(name), 'utf8').trim();
}

export class HostChanges {
  private readonly undo: { what: string; fn: () => void }[] = [];

  /** Records an undo step for a change made elsewhere (e.g. by a daemon we start). */
  onRevert(what: string, fn: () => void): void {
    this.undo.push({ what, fn });
  }

  /** `ip <args>`, undone by `ip <undoArgs>`. */
  ip(args: string[], undoArgs: string[]): void {
    sh('ip', args);
    this.onRevert(`ip ${undoArgs.join(' ')}`, () => shQuiet('ip', undoArgs));
  }

  /** `iptables -I <chain> <rule>`, undone by -D. */
  iptablesInsert(chain: string, rule: string[]): void {
    sh('iptables', ['-w', '-I', chain, ...rule]);
    this.onRevert(`iptables -D ${chain}`, () => shQuiet('iptables', ['-w', '-D', chain, ...rule]));
  }

  /** Saves a sysctl's value so revert() puts it back; sets it when `value` is given. */
  sysctl(name: string, value?: string): void {
    const before = readSysctl(name);
    this.onRevert(`sysctl ${name}=${before}`, () => {
      if (readSysctl(name) !== before) writeFileSync(sysctlPath(name), before);
    });
    if (value !== undefined && value !== before) writeFileSync(sysctlPath(name), value);
  }

  /** Undoes every change, last first; returns what could not be undone. */
  revert(): string[] {
    const failed: string[] = [];
    while (this.undo.length > 0) {
      const { what, fn } = this.undo.pop()!;
      try {
        fn();
      } catch (err) {
        failed.push(`${what}: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    return failed;
  }
}
