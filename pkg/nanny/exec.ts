// -dnsmasqExec → what to spawn. A .js/.ts entry (our dnscache) runs under this Node with the flags
// its own shebang line gives in production, read from the file so they live in one place; anything
// else (real dnsmasq) is spawned directly.

const { openSync, readSync, closeSync } = process.getBuiltinModule('node:fs');
import { basename, dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loggingFormatArgs } from '../log/log.ts';

export interface ChildCommand {
  file: string;
  /** Arguments before the child's own (Node flags and the entry). */
  prefix: string[];
  /** Output prefix and log name: `dnscache`, `dnsmasq`. */
  name: string;
  /**
   * A line the child prints once its signal handlers are in place (SIGHUP/SIGUSR1 are safe then);
   * null for a program we do not know: it counts as ready a while after it starts.
   */
  ready: RegExp | null;
  /**
   * The child reads `no-resolv` from its servers-file (our dnscache): upstreamNameservers appearing
   * or going is then a SIGHUP like every other ConfigMap change, and the child is never restarted
   * for one, so no socket closes and no query is lost. dnsmasq takes only `server=` lines there: it
   * gets --no-resolv on its command line, and a restart (the old one gone before the new one binds).
   */
  serversFileNoResolv: boolean;
  /**
   * Exit codes that mean it stopped on our SIGTERM, besides 0: dnsmasq exits 5 (EC_MISC) when the
   * SIGTERM comes before its startup is done (its sig_handler while pid == 0), which is after it has
   * logged `started, version`: a pod deleted just as it starts.
   */
  stopCodes: number[];
  /**
   * Flags that make the child write the nanny's log format (--logging-format), so the container's
   * stream is one format: our dnscache takes it; dnsmasq has none. Not --v: the manifest's -v=2 for
   * the nanny (the original's) would turn on dnscache's per-query failure lines.
   */
  logging: string[];
}

const SCRIPT = new Set(['.js', '.ts', '.mjs', '.mts']);

/** Run from the sources (.ts) or from dist/ (.js): a sibling program is taken in the same form. */
const OWN_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** One of our programs' entries, `cmd/<name>/main.ts` (or dist's `main.js`): dnscache, sidecar... */
export function programEntry(name: string): string {
  return fileURLToPath(new URL(`../../cmd/${name}/main${OWN_EXTENSION}`, import.meta.url));
}

/** The Node flags of a `#!/usr/bin/env -S node --flag ...` (or `#!/path/node --flag`) first line. */
export function shebangNodeFlags(firstLine: string): string[] {
  if (!firstLine.startsWith('#!')) return [];
  const words = firstLine.slice(2).trim().split(/\s+/);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  return node < 0 ? [] : words.slice(node + 1);
}

function firstLine(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').split('\n', 1)[0];
  } finally {
    closeSync(fd);
  }
}

/** `cmd/dnscache/main.ts` → `dnscache`; `/usr/sbin/dnsmasq` → `dnsmasq`. */
export function programName(path: string): string {
  const base = basename(path, extname(path));
  return base === 'main' || base === 'index' ? basename(dirname(path)) : base;
}

/**
 * How to run `exec`. A script that cannot be read spawns directly, so the failure is the child's
 * (counted as a failed start) rather than the nanny's.
 */
export function childCommand(exec: string, nodePath = process.execPath, logging = loggingFormatArgs()): ChildCommand {
  const name = programName(exec);
  // dnscache logs `listening` after its handlers are set (text `"listening" logger=...`, JSON
  // `"msg":"listening","v":0`); dnsmasq sets them before `started, version`. A known program is
  // waited for however slowly it starts (a loaded node can take seconds): a SIGHUP before its
  // handlers are set would end it.
  const ready = name === 'dnsmasq' ? /started, version/ : name === 'dnscache' ? /"listening"[ ,]/ : null;
  const ours = name === 'dnscache';
  const known = { name, ready, serversFileNoResolv: ours, stopCodes: name === 'dnsmasq' ? [0, 5] : [0], logging: ours ? logging : [] };
  if (!SCRIPT.has(extname(exec))) return { file: exec, prefix: [], ...known };
  let flags: string[];
  try {
    flags = shebangNodeFlags(firstLine(exec));
  } catch {
    return { file: exec, prefix: [], ...known };
  }
  return { file: nodePath, prefix: [...flags, exec], ...known };
}
