// dnsmasq-nanny minus its flags, as one named object: the config directory is watched; each accepted
// version is turned into a plan (servers-file + command line, names resolved) and applied the
// cheapest way that keeps queries flowing: nothing, a rewritten servers-file + SIGHUP, or a restart
// (stop, then start: dnsmasq for a changed command line; dnscache takes every change by SIGHUP).

const { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } = process.getBuiltinModule('node:fs');
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigDirWatcher } from '../config/config.ts';
import type { HostPort } from '../config/config.ts';
import type { Logger } from '../log/log.ts';
import { childArgs, kubednsDomains, logFacility, planChange, serversFileText, withoutAddSubnet } from './args.ts';
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
  /** The child's output lines (default: passed on into our log, pkg/nanny/supervisor.ts). */
  output?: (line: string) => void;
  backoff?: Partial<Backoff>;
}

export class Nanny {
  /** Resolves with the reason when the child is in a crash loop; nothing is restarted after that. */
  readonly crashLoop: Promise<string>;
  private readonly o: NannyOptions;
  private readonly log: Logger;
  private readonly dir: string;
  private readonly serversFile: string;
  private readonly resolver: StubResolver;
  private readonly supervisor: Supervisor;
  private readonly watcher: ConfigDirWatcher;
  private configUpdates = 0;
  private current: ChildPlan | null = null;
  private unresolved = 0;
  private closing = false;
  private lameDucking = false;
  /** The last command line we were told to restart for and could not (-restartDnsmasq=false). */
  private withheld = '';
  private applying: Promise<void> | null = null;
  private again = false;
  private timers: NodeJS.Timeout[] = [];
  private endpoint: HttpListening | null = null;
  private stopped: Promise<ChildExit | null> | null = null;

  constructor(options: NannyOptions) {
    this.log = options.log;
    const o = (this.o = this.forChild(options));
    this.dir = mkdtempSync(join(tmpdir(), 'dnsmasq-nanny-'));
    // dnsmasq started as root reads the servers-file after dropping to nobody: the directory must let
    // it through (not list it), the file be readable. Server addresses are no secret.
    chmodSync(this.dir, 0o711);
    this.serversFile = join(this.dir, 'servers');
    const clusterDomains = kubednsDomains(o.childArgs, o.kubedns);
    this.log.info('cluster names resolve through kube-dns', { server: `${o.kubedns.host}:${o.kubedns.port}`, domains: clusterDomains.join(',') });
    this.resolver = new StubResolver({ kubedns: o.kubedns, clusterDomains, log: this.log.child('resolve') });
    let reportCrashLoop!: (reason: string) => void;
    this.crashLoop = new Promise<string>((resolve) => (reportCrashLoop = resolve));
    // A child whose log goes elsewhere never prints its ready line here: fall back to a short wait.
    const facility = logFacility(o.childArgs);
    const command = facility === null || facility === '-' ? o.command : { ...o.command, ready: null };
    this.supervisor = new Supervisor({ command, log: this.log.child(o.command.name), output: o.output, backoff: o.backoff, onCrashLoop: reportCrashLoop });
    this.watcher = new ConfigDirWatcher(o.configDir, o.syncIntervalMs, this.log.child('config'));
  }

  /** The options with the child's args as it may take them: real dnsmasq without --add-subnet (warned). */
  private forChild(o: NannyOptions): NannyOptions {
    if (o.command.name !== 'dnsmasq') return o;
    const { kept, dropped } = withoutAddSubnet(o.childArgs);
    if (dropped.length === 0) return o;
    this.log.warn("not passed to dnsmasq: it would send each asker's address to every server, upstreams included, and cache no forwarded reply (kube-dns --autopath needs dnscache for it)", { args: dropped.join(' ') });
    return { ...o, childArgs: kept };
  }

  /** Serves the metrics (a taken port rejects, with nothing left behind), then starts the child with the config. */
  async start(): Promise<{ metricsPort: number | null }> {
    const o = this.o;
    if (o.metrics !== null) {
      try {
        this.endpoint = await serveMetrics(o.metrics, createNannyMetrics(() => this.status()), () => this.ready());
      } catch (err) {
        await this.resolver.close();
        rmSync(this.dir, { recursive: true, force: true });
        throw err;
      }
      this.log.info('metrics listening', { address: o.metrics.host || '*', port: this.endpoint.port });
    }
    // Names that did not resolve are tried again at every sync until they do (kube-dns starts late).
    this.timers.push(setInterval(() => this.unresolved > 0 && void this.sync(), o.syncIntervalMs));
    if (o.logIntervalMs > 0) this.timers.push(setInterval(() => this.supervisor.signal('SIGUSR1'), o.logIntervalMs));
    this.watcher.start(() => {
      this.configUpdates++;
      void this.sync();
    });
    await this.sync();
    return { metricsPort: this.endpoint?.port ?? null };
  }

  /** SIGTERM's first step: /readiness fails from now on; the child keeps answering until stop(). */
  lameDuck(): void {
    this.lameDucking = true;
  }

  /** Why /readiness fails, or null: ready while a child that said it is ready runs, until the lame duck. */
  ready(): string | null {
    if (this.lameDucking) return 'shutting down (lame duck)';
    return this.supervisor.answering ? null : `${this.o.command.name} is not running`;
  }

  /** Stops watching, stops the child (SIGTERM, SIGKILL after 5 s), removes the temp dir; how the child ended. */
  stop(): Promise<ChildExit | null> {
    return (this.stopped ??= this.stopOnce());
  }

  status(): NannyCounts {
    const s = this.supervisor.stats;
    return {
      configUpdates: this.configUpdates,
      configInvalid: this.watcher.invalidUpdates,
      reloads: s.reloads,
      configRestarts: s.configRestarts,
      exitRestarts: s.exitRestarts,
      stubFailures: this.resolver.stats.failures,
      childUp: this.supervisor.up,
    };
  }

  private async stopOnce(): Promise<ChildExit | null> {
    this.closing = true;
    for (const t of this.timers) clearInterval(t);
    this.watcher.stop();
    await this.resolver.close(); // fails a resolution in flight at once
    const exit = await this.supervisor.stop();
    await this.applying;
    await this.endpoint?.close();
    rmSync(this.dir, { recursive: true, force: true });
    return exit;
  }

  /** One apply at a time; a change arriving meanwhile runs one more pass after it. */
  private sync(): Promise<void> {
    if (this.applying !== null) {
      this.again = true;
      return this.applying;
    }
    this.applying = (async () => {
      try {
        do {
          this.again = false;
          await this.applyOnce().catch((err: Error) => this.log.error('applying the configuration failed', { err: err.message }));
        } while (this.again && !this.closing);
      } finally {
        this.applying = null;
      }
    })();
    return this.applying;
  }

  private async applyOnce(): Promise<void> {
    const config = this.watcher.current();
    const resolved = await this.resolver.servers(config);
    if (this.closing) return;
    this.unresolved = resolved.unresolved.length;
    const hasUpstreams = config.upstreamNameservers.length > 0;
    const next: ChildPlan = {
      args: childArgs(this.o.childArgs, this.serversFile, hasUpstreams, this.o.command),
      servers: serversFileText(resolved.entries, hasUpstreams && this.o.command.serversFileNoResolv),
    };
    const fields = { servers: resolved.entries.length, unresolved: this.unresolved || undefined };
    const change = planChange(this.current, next);
    if (change !== 'restart') this.withheld = '';
    switch (change) {
      case 'none':
        return;
      case 'start':
        this.writeServers(next.servers);
        this.current = next;
        this.log.info('starting the child', fields);
        this.supervisor.start(next.args);
        return;
      case 'reload':
        this.reloadServers(next, fields);
        return;
      case 'restart':
        if (!this.o.restartOnChange) {
          const pending = next.args.join(' ');
          if (pending !== this.withheld) this.log.warn('the child needs a restart for its new command line, but -restartDnsmasq=false: keeping it running', { args: pending });
          this.withheld = pending;
          if (this.current!.servers !== next.servers) this.reloadServers(next, fields);
          return;
        }
        this.writeServers(next.servers);
        this.current = next;
        this.log.info('command line changed: restarting the child', { ...fields, args: next.args.join(' ') });
        await this.supervisor.restart(next.args);
        return;
    }
  }

  /** The child keeps its command line; only the servers-file changes under it. */
  private reloadServers(next: ChildPlan, fields: Record<string, unknown>): void {
    this.writeServers(next.servers);
    this.current = { args: this.current!.args, servers: next.servers };
    this.log.info('servers changed: servers-file rewritten, child reloaded (SIGHUP)', { ...fields, sighup: this.supervisor.reload() });
  }

  /** Write + rename: the child never reads half a file. */
  private writeServers(text: string): void {
    const tmp = `${this.serversFile}.tmp`;
    writeFileSync(tmp, text);
    chmodSync(tmp, 0o644);
    renameSync(tmp, this.serversFile);
  }
}
