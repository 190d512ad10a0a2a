// node-cache as one named object: the Corefile rendered from the template and the kube-dns ConfigMap,
// planned and served (engine.ts); the interface and rules set up and re-checked every -syncinterval;
// the ConfigMap watched, a changed Corefile served by a new engine bound beside the old one before
// the old one drains (SO_REUSEPORT: no query lost); the setup metrics, and the Corefile's prometheus
// and health endpoints. stop() drains and, unless -skipteardown, takes the rules and interface away.

const { readFileSync, writeFileSync } = process.getBuiltinModule('node:fs');
import { ConfigDirWatcher } from '../config/config.ts';
import { udpPortTaken } from '../dns/port-taken.ts';
import type { KubeDnsConfig } from '../config/config.ts';
import { resolvConfNameservers } from '../forward/forward.ts';
import { listenHttp } from '../httpserver/listen.ts';
import { http } from '../httpserver/node-http.ts';
import type { HttpListening } from '../httpserver/listen.ts';
import type { Logger } from '../log/log.ts';
import type { Fairness } from '../dns/fairness.ts';
import { fairShare } from '../fairshare/fairshare.ts';
import { parseCorefile } from '../corefile/read.ts';
import { ZoneEngine } from './engine.ts';
import type { ZoneEngineOptions } from './engine.ts';
import { ensureLink, removeLink } from './interface.ts';
import { createNodeCacheMetrics, SETUP_ERRORS } from './metrics.ts';
import type { SetupErrorType } from './metrics.ts';
import { planCorefile } from './plan.ts';
import type { NodeCachePlan } from './plan.ts';
import { chooseFirewall, nodeLocalRules } from './rules.ts';
import type { Firewall } from './rules.ts';
import { renderCorefile, serviceHostEnv } from './template.ts';

/** How often the mounted kube-dns ConfigMap is read (the original's 10 s). */
const CONFIG_PERIOD_MS = 10_000;

export interface NodeCacheOptions {
  localIps: string[];
  setupInterface: boolean;
  interfaceName: string;
  setupIptables: boolean;
  syncIntervalMs: number;
  skipTeardown: boolean;
  baseCorefile: string;
  corefile: string;
  /** Where the kube-dns ConfigMap is mounted. */
  kubednsConfigDir: string;
  upstreamSvc: string;
  healthPort: number;
  /** host:port of the setup metrics. */
  metricsAddress: string;
  dnsPort: number;
  /** Serve-stale for zones whose cache block does not say (CoreDNS's serve_stale), seconds; 0 = off. */
  serveStaleS: number;
  resolvConf: string;
  /** -fair-share-busy/-fair-share-floor (pkg/fairshare); null or absent: misses never shared. */
  fairShare?: { busyAt: number; floorPerSecond: number } | null;
  env: NodeJS.ProcessEnv;
  log: Logger;
}

/**
 * Misses in flight (forwarded, their answers awaited) from which the pods' are shared, as dnscache's
 * (half its --dns-forward-max); fewer while the upstream's answers queue (pkg/dns fairness.ts).
 */
const FORWARD_SLOTS = 5000;

export class NodeCache {
  readonly setupErrors = new Map<SetupErrorType, number>(SETUP_ERRORS.map((e) => [e, 0]));
  private readonly o: NodeCacheOptions;
  private readonly log: Logger;
  private readonly watcher: ConfigDirWatcher;
  private engine: ZoneEngine | null = null;
  private plan: NodeCachePlan | null = null;
  private corefileText = '';
  private firewall: Firewall | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly http: HttpListening[] = [];
  private applying: Promise<void> = Promise.resolve();
  private readonly metrics = createNodeCacheMetrics(this);
  /** The pods' misses shared while the thread is busy, across reloads (every engine's listeners); null: never. */
  private readonly fairness: Fairness | null;

  constructor(o: NodeCacheOptions) {
    this.o = o;
    this.log = o.log;
    this.fairness = fairShare({ settings: o.fairShare ?? null, log: o.log, slots: FORWARD_SLOTS, metrics: { registry: this.metrics.registry, prefix: 'coredns_nodecache' } });
    this.watcher = new ConfigDirWatcher(o.kubednsConfigDir, CONFIG_PERIOD_MS, o.log.child('config'));
  }

  /** Renders and serves the Corefile (a line it cannot serve rejects), sets up interface and rules, starts watching. */
  async start(): Promise<{ address: string; port: number }[]> {
    this.watcher.start(() => void this.reconfigure());
    const plan = this.render(this.watcher.current());
    await this.setUp();
    const engine = new ZoneEngine(plan, this.log, this.engineOptions());
    const bound = await engine.start();
    [this.engine, this.plan] = [engine, plan];
    await this.serveHttp(plan);
    this.timer = setInterval(() => void this.setUp(), this.o.syncIntervalMs);
    this.timer.unref();
    return bound;
  }

  /**
   * Serves on for the Corefile's `health { lameduck }`, as CoreDNS does; then stops serving (answering
   * what is in flight) and takes the rules and interface away unless -skipteardown.
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.watcher.stop();
    await this.applying;
    const lameDuckMs = this.plan?.healthLameDuckMs ?? 0;
    if (lameDuckMs > 0) {
      this.log.info('lame duck: still serving', { for: `${lameDuckMs}ms` });
      await new Promise((resolve) => setTimeout(resolve, lameDuckMs));
    }
    await this.engine?.stop();
    this.fairness?.close();
    for (const h of this.http) await h.close();
    if (this.o.skipTeardown) return;
    // A successor (the DaemonSet's surge pod) already serves beside us: the interface and rules are its now.
    if (await udpPortTaken(this.o.localIps[0], this.o.dnsPort)) {
      this.log.info('another node-cache serves the local address: leaving the interface and rules to it', { address: this.o.localIps[0], port: this.o.dnsPort });
      return;
    }
    await this.firewall?.remove().catch((err: Error) => this.log.error('cannot remove the rules', { err: err.message }));
    if (this.o.setupInterface) await removeLink(this.o.interfaceName).catch((err: Error) => this.log.error('cannot remove the interface', { err: err.message }));
  }

  get served(): NodeCachePlan | null {
    return this.plan;
  }

  get serving(): ZoneEngine | null {
    return this.engine;
  }

  private engineOptions(): ZoneEngineOptions {
    return { metrics: this.metrics.requests, fairness: this.fairness ?? undefined, askersTo: this.clusterDns() };
  }

  /** The upstream Service's ClusterIP (`<NAME>_SERVICE_HOST`), '' when the environment has none. */
  private clusterDns(): string {
    return this.o.env[serviceHostEnv(this.o.upstreamSvc)] ?? '';
  }

  /** -basecorefile with the ConfigMap → -corefile, planned; throws CorefileError. */
  private render(config: KubeDnsConfig): NodeCachePlan {
    const o = this.o;
    const clusterDns = this.clusterDns();
    if (clusterDns === '') this.log.warn('the upstream Service has no ClusterIP in the environment', { variable: serviceHostEnv(o.upstreamSvc) });
    // A resolv.conf names addresses only (port 53); renderCorefile writes them as forward targets.
    const resolvServers = resolvConfNameservers(o.resolvConf).map((u) => u.host);
    const rendered = renderCorefile(readFileSync(o.baseCorefile, 'utf8'), { clusterDns, resolvServers, localIps: o.localIps, port: o.dnsPort, config });
    for (const s of rendered.skipped) {
      this.count('configmap');
      this.log.error('kube-dns ConfigMap entry left out', { problem: s });
    }
    // Imports are relative to the base Corefile's folder (the mounted ConfigMap), as CoreDNS reads it.
    const blocks = parseCorefile(rendered.text, { path: o.baseCorefile, warn: (message) => this.log.warn('Corefile import', { problem: message }) });
    const plan = planCorefile(blocks, { defaultPort: o.dnsPort });
    // -serve-stale: as node-cache's flag always served it, answered when the upstreams fail.
    for (const z of plan.zones) if (z.cache !== null && z.cache.staleS === 0) Object.assign(z.cache, { staleS: o.serveStaleS, staleMode: 'verify' });
    if (rendered.text !== this.corefileText) {
      writeFileSync(o.corefile, rendered.text);
      this.corefileText = rendered.text;
    }
    return plan;
  }

  /** A new ConfigMap version: a changed Corefile is served by a new engine beside the old, then the old drains. */
  private reconfigure(): void {
    this.applying = this.applying.then(async () => {
      const before = this.corefileText;
      let plan: NodeCachePlan;
      try {
        plan = this.render(this.watcher.current());
      } catch (err) {
        this.count('configmap');
        this.log.error('the new Corefile cannot be served, keeping the old one', { err: (err as Error).message });
        return;
      }
      if (this.corefileText === before || this.engine === null) return;
      const next = new ZoneEngine(plan, this.log, this.engineOptions());
      try {
        await next.start();
      } catch (err) {
        this.log.error('cannot serve the new Corefile, keeping the old one', { err: (err as Error).message });
        return;
      }
      const old = this.engine;
      [this.engine, this.plan] = [next, plan];
      await old.stop();
      this.log.info('serving the new Corefile', { zones: plan.zones.map((z) => z.zone || '.').join(',') });
    });
  }

  /** The interface and the rules, added where missing; a failure is logged and counted, and retried next sync. */
  private async setUp(): Promise<void> {
    const o = this.o;
    if (o.setupInterface) {
      try {
        const link = await ensureLink(o.interfaceName, o.localIps);
        if (link.added.length > 0) this.log.info('interface ready', { name: o.interfaceName, kind: link.kind, added: link.added.join(',') });
      } catch (err) {
        this.count('interfaceadd');
        this.log.error('cannot set up the interface', { name: o.interfaceName, err: (err as Error).message });
      }
    }
    if (!o.setupIptables) return;
    try {
      this.firewall ??= await chooseFirewall(nodeLocalRules(o.localIps, o.dnsPort, o.healthPort));
      const added = await this.firewall.ensure();
      if (added > 0) this.log.info('rules added', { kind: this.firewall.kind, added });
    } catch (err) {
      this.count('iptables');
      this.log.error('cannot set up the rules', { err: (err as Error).message });
    }
  }

  private count(type: SetupErrorType): void {
    this.setupErrors.set(type, (this.setupErrors.get(type) ?? 0) + 1);
  }

  /** -metrics-listen-address: the setup metrics; the Corefile's prometheus: DNS metrics; its health: /health. */
  private async serveHttp(plan: NodeCachePlan): Promise<void> {
    const { registry } = this.metrics;
    const routes = new Map<string, Map<string, () => Promise<[number, string, string]>>>();
    const add = (address: string, path: string, handler: () => Promise<[number, string, string]>) => {
      const at = routes.get(address) ?? new Map();
      at.set(path, handler);
      routes.set(address, at);
    };
    const metrics = async (): Promise<[number, string, string]> => [200, registry.contentType, await registry.metrics()];
    add(this.o.metricsAddress, '/metrics', metrics);
    if (plan.metrics !== null) add(plan.metrics, '/metrics', metrics);
    if (plan.health !== null) add(plan.health, '/health', async () => [200, 'text/plain', 'OK']);
    for (const [address, paths] of routes) {
      const server = http.createServer((req, res) => {
        const handler = paths.get((req.url ?? '/').split('?')[0]);
        if (handler === undefined) return void res.writeHead(404).end('not found\n');
        handler().then(
          ([status, type, body]) => res.writeHead(status, { 'content-type': type }).end(body),
          (err: Error) => res.writeHead(500).end(`${err.message}\n`),
        );
      });
      const { host, port } = splitAddress(address);
      // Beside a successor's during a DaemonSet surge, as the DNS listeners are.
      this.http.push(await listenHttp(server, host, port, true));
      this.log.info('HTTP listening', { address: host || '*', port, paths: [...paths.keys()].join(',') });
    }
  }
}

/** host:port, :port, [v6]:port; `localhost` as CoreDNS binds it. */
function splitAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(address)!;
  return { host: m[1] ?? m[2], port: Number(m[3]) };
}
