// dnsmasq-nanny minus its flags: the config directory is watched; each accepted version is turned
// into a plan (servers-file + command line, names resolved) and applied the cheapest way that keeps
// queries flowing: nothing, a rewritten servers-file + SIGHUP, or a restart that waits for the old
// child before starting the new one.

import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigDirWatcher } from '../config/config.ts';
import type { HostPort } from '../config/config.ts';
import type { Logger } from '../log/log.ts';
import { childArgs, kubednsDomains, logFacility, planChange, serversFileText } from './args.ts';
import type { ChildPlan } from './args.ts';
import type { ChildCommand } from './exec.ts';
import { serveMetrics } from './http.ts';
import type { ListenAddress } from './http.ts';
import type { HttpListening } from '../httpserver/listen.ts';
import { createNannyMetrics } from './metrics.ts';
import type { NannyCounts } from './metrics.ts';
import { StubResolver } from './resolve.ts';
import { Supervisor } from './supervisor.ts';
import type { Backoff, ChildExit } from './supervisor.ts';

export interface NannyOptions {
  command: ChildCommand;
  /** The arguments after `--`, passed to the child unchanged. */
  childArgs: readonly string[];
  /** -restartDnsmasq: apply command-line changes by restarting the child. */
  restartOnChange: boolean;
  configDir: string;
  syncIntervalMs: number;
  /** -kubednsServer. */
  kubedns: HostPort;
  /** SIGUSR1 to the child this often; 0 = never. */
  logIntervalMs: number;
  /** null = no HTTP endpoint. */
  metrics: ListenAddress | null;
  log: Logger;
  /** The child's prefixed output lines (default: our stderr). */
  output?: (line: string) => void;
  backoff?: Partial<Backoff>;
}

export interface RunningNanny {
  /** The metrics port bound, null without -metricsAddress. */
  metricsPort: number | null;
  /** Resolves with the reason when the child is in a crash loop; nothing is restarted after that. */
  crashLoop: Promise<string>;
  counts(): NannyCounts;
  /** Stops watching, stops the child (SIGTERM, SIGKILL after 5 s), removes the temp dir. */
  close(): Promise<ChildExit | null>;
}

export async function runNanny(o: NannyOptions): Promise<RunningNanny> {
  const log = o.log;
  const dir = mkdtempSync(join(tmpdir(), 'dnsmasq-nanny-'));
  // dnsmasq started as root reads the servers-file after dropping to nobody: the directory must let
  // it through (not list it), the file be readable. Server addresses are no secret.
  chmodSync(dir, 0o711);
  const serversFile = join(dir, 'servers');
  const clusterDomains = kubednsDomains(o.childArgs, o.kubedns);
  log.info('cluster names resolve through kube-dns', { server: `${o.kubedns.host}:${o.kubedns.port}`, domains: clusterDomains.join(',') });
  const resolver = new StubResolver({ kubedns: o.kubedns, clusterDomains, log: log.child('resolve') });

  let reportCrashLoop!: (reason: string) => void;
  const crashLoop = new Promise<string>((resolve) => (reportCrashLoop = resolve));
  // A child whose log goes elsewhere never prints its ready line here: fall back to a short wait.
  const facility = logFacility(o.childArgs);
  const command = facility === null || facility === '-' ? o.command : { ...o.command, ready: null };
  const supervisor = new Supervisor({ command, log: log.child(o.command.name), output: o.output, backoff: o.backoff, onCrashLoop: reportCrashLoop });

  let configUpdates = 0;
  let current: ChildPlan | null = null;
  let unresolved = 0;
  let closing = false;
  /** The last command line we were told to restart for and could not (-restartDnsmasq=false). */
  let withheld = '';

  const writeServers = (text: string) => {
    // Write + rename: the child never reads half a file.
    const tmp = `${serversFile}.tmp`;
    writeFileSync(tmp, text);
    chmodSync(tmp, 0o644);
    renameSync(tmp, serversFile);
  };

  const applyOnce = async () => {
    const config = watcher.current();
    const resolved = await resolver.servers(config);
    if (closing) return;
    unresolved = resolved.unresolved.length;
    const next: ChildPlan = { args: childArgs(o.childArgs, serversFile, config.upstreamNameservers.length > 0, o.command.startsBeside), servers: serversFileText(resolved.entries) };
    const fields = { servers: resolved.entries.length, unresolved: unresolved || undefined };
    // The child keeps its command line; only the servers-file changes under it.
    const reloadServers = () => {
      writeServers(next.servers);
      current = { args: current!.args, servers: next.servers };
      log.info('servers changed: servers-file rewritten, child reloaded (SIGHUP)', { ...fields, sighup: supervisor.reload() });
    };
    const change = planChange(current, next);
    if (change !== 'restart') withheld = '';
    switch (change) {
      case 'none':
        return;
      case 'start':
        writeServers(next.servers);
        current = next;
        log.info('starting the child', fields);
        supervisor.start(next.args);
        return;
      case 'reload':
        reloadServers();
        return;
      case 'restart':
        if (!o.restartOnChange) {
          const pending = next.args.join(' ');
          if (pending !== withheld) log.warn('the child needs a restart for its new command line, but -restartDnsmasq=false: keeping it running', { args: pending });
          withheld = pending;
          if (current!.servers !== next.servers) reloadServers();
          return;
        }
        writeServers(next.servers);
        current = next;
        log.info('command line changed: restarting the child', { ...fields, args: next.args.join(' ') });
        await supervisor.restart(next.args);
        return;
    }
  };

  // One apply at a time; a change arriving meanwhile runs one more pass after it.
  let applying: Promise<void> | null = null;
  let again = false;
  const sync = (): Promise<void> => {
    if (applying !== null) {
      again = true;
      return applying;
    }
    applying = (async () => {
      try {
        do {
          again = false;
          await applyOnce().catch((err: Error) => log.error('applying the configuration failed', { error: err.message }));
        } while (again && !closing);
      } finally {
        applying = null;
      }
    })();
    return applying;
  };

  const watcher = new ConfigDirWatcher(
    o.configDir,
    o.syncIntervalMs,
    () => {
      configUpdates++;
      void sync();
    },
    log.child('config'),
  );
  // Names that did not resolve are tried again at every sync until they do (kube-dns starts late).
  const retry = setInterval(() => {
    if (unresolved > 0) void sync();
  }, o.syncIntervalMs);
  const stats = o.logIntervalMs > 0 ? setInterval(() => supervisor.signal('SIGUSR1'), o.logIntervalMs) : undefined;

  const counts = (): NannyCounts => ({
    configUpdates,
    configInvalid: watcher.stats.invalidUpdates,
    reloads: supervisor.stats.reloads,
    configRestarts: supervisor.stats.configRestarts,
    exitRestarts: supervisor.stats.exitRestarts,
    stubFailures: resolver.stats.failures,
    childUp: supervisor.up,
  });

  // Bound before the child starts: a taken port is a start-up error with nothing left behind.
  let endpoint: HttpListening | null = null;
  if (o.metrics !== null) {
    try {
      endpoint = await serveMetrics(o.metrics, createNannyMetrics(counts));
    } catch (err) {
      clearInterval(retry);
      clearInterval(stats);
      await resolver.close();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    log.info('metrics listening', { address: o.metrics.host || '*', port: endpoint.port });
  }

  watcher.start();
  await sync();

  let closed: Promise<ChildExit | null> | null = null;
  const close = async (): Promise<ChildExit | null> => {
    closing = true;
    clearInterval(retry);
    clearInterval(stats);
    watcher.stop();
    await resolver.close(); // fails a resolution in flight at once
    const exit = await supervisor.stop();
    await applying;
    await endpoint?.close();
    rmSync(dir, { recursive: true, force: true });
    return exit;
  };
  return {
    metricsPort: endpoint?.port ?? null,
    crashLoop,
    counts,
    close: () => (closed ??= close()),
  };
}
