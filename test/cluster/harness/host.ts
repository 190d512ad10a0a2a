// What a single-node cluster changes on this machine, each change recorded with its undo: links and
// addresses, routes, iptables rules, sysctls (the kubelet and kube-proxy rewrite some at start, so their
// values before are saved, in memory and in a file, and put back). revert() undoes everything in
// reverse order and never throws: a teardown must get as far as it can. And the pieces a teardown and
// a sweep after a killed run share: killing by command line or cgroup, unmounting, KUBE-* chains,
// cgroups.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NFT_TABLE, RULE_COMMENT } from '../../../pkg/nodecache/rules.ts';

/** node-cache's -interfacename default (manifests/optional/node-local-dns.yaml keeps it). */
const NODE_CACHE_LINK = 'nodelocaldns';

/** Runs a command, returning stdout; throws with its stderr. */
export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
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
  private readonly sysctlsBefore: Record<string, string> = {};

  private readonly record: string;

  /** `record`: a file the sysctls' values before are written to, for a sweep after a killed run. */
  constructor(record: string) {
    this.record = record;
  }

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
    this.sysctlsBefore[name] = before;
    writeFileSync(this.record, JSON.stringify(this.sysctlsBefore));
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

/** SIGKILLs every process whose command line (NULs as spaces) `matches`; returns how many. */
export function killMatching(matches: (cmdline: string, pid: number) => boolean): number {
  let killed = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // gone
    }
    if (!matches(cmdline, Number(entry))) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed++;
    } catch {
      // gone
    }
  }
  return killed;
}

/** Processes in cgroup `root` of any hierarchy: the pods' containers, which outlive a killed shim. */
export function inCgroup(pid: number, root: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(`:/${root}/`);
  } catch {
    return false;
  }
}

/** Every mount below `dir` (the kubelet's volumes, containerd's rootfs mounts), deepest first. */
export function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1]).filter((m) => m !== undefined && m.startsWith(dir + '/'));
  for (const m of mounts.sort((a, b) => b.length - a.length)) shQuiet('umount', ['-l', m]);
}

/** What kube-proxy --cleanup and the kubelet leave: KUBE-* chains and the rules that jump to them. */
export function removeKubeChains(): void {
  for (const table of ['filter', 'nat', 'mangle']) {
    const rules = sh('iptables', ['-w', '-t', table, '-S']).split('\n');
    for (const rule of rules) {
      if (rule.startsWith('-A ') && / -j KUBE-/.test(rule) && !rule.startsWith('-A KUBE-')) {
        shQuiet('sh', ['-c', `iptables -w -t ${table} ${rule.replace(/^-A /, '-D ')}`]);
      }
    }
    const chains = rules.map((r) => /^-N (KUBE-\S+)/.exec(r)?.[1]).filter((c): c is string => c !== undefined);
    for (const chain of chains) shQuiet('iptables', ['-w', '-t', table, '-F', chain]);
    for (const chain of chains) shQuiet('iptables', ['-w', '-t', table, '-X', chain]);
  }
}

/** Rules of `chain` (filter table) carrying `comment`, deleted. */
export function removeCommented(chain: string, comment: string): void {
  for (const rule of sh('iptables', ['-w', '-S', chain]).split('\n')) {
    if (rule.startsWith(`-A ${chain} `) && rule.includes(comment)) shQuiet('sh', ['-c', `iptables -w ${rule.replace(/^-A /, '-D ')}`]);
  }
}

/**
 * What a node-cache pod (host network) leaves on the machine when its container is killed instead of
 * stopped: its interface (default name), its rules and its nftables table. True when it found any.
 */
export function removeNodeCacheLeftovers(): boolean {
  let found = false;
  if (sh('ip', ['-o', 'link']).includes(`${NODE_CACHE_LINK}:`)) {
    shQuiet('ip', ['link', 'del', NODE_CACHE_LINK]);
    found = true;
  }
  for (const table of ['raw', 'filter']) {
    for (const rule of sh('iptables', ['-w', '-t', table, '-S']).split('\n')) {
      if (!rule.startsWith('-A ') || !rule.includes(RULE_COMMENT)) continue;
      shQuiet('sh', ['-c', `iptables -w -t ${table} ${rule.replace(/^-A /, '-D ')}`]);
      found = true;
    }
  }
  shQuiet('nft', ['delete', 'table', 'inet', NFT_TABLE]);
  return found;
}

/** A cgroup made in every v1 hierarchy (the kubelet's cgroupRoot, which the kubelet does not make). */
export function makeCgroups(root: string): void {
  for (const controller of readdirSync('/sys/fs/cgroup')) {
    if (!existsSync(join('/sys/fs/cgroup', controller, 'cgroup.procs'))) continue;
    const dir = join('/sys/fs/cgroup', controller, root);
    mkdirSync(dir, { recursive: true });
    // A new cpuset has no CPUs or memory nodes until given its parent's.
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = join('/sys/fs/cgroup', controller, file);
      if (existsSync(parent)) writeFileSync(join(dir, file), readFileSync(parent, 'utf8').trim());
    }
  }
}

/** A cgroup and everything under it in every hierarchy, leaves first (its processes must be gone). */
export function removeCgroups(root: string): void {
  for (const controller of readdirSync('/sys/fs/cgroup')) {
    const top = join('/sys/fs/cgroup', controller, root);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    const walk = (p: string) => {
      dirs.push(p);
      for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) walk(join(p, e.name));
    };
    walk(top);
    for (const p of dirs.reverse()) shQuiet('rmdir', [p]);
  }
}
