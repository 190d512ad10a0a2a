// kube-dns's configuration from a Corefile (CoreDNS's -conf): the root's forward as the upstreams and
// other zones' forward blocks as stub domains, read again every `reload` interval; the plugins that
// answer before kube-dns's own (any, chaos, rewrite, template, hosts, file) replaced when they change. A
// Corefile that no longer reads, or that changes what only a start applies (the cluster zone, ports,
// endpoints, cache, log, autopath, forward's options), is not applied: the running one serves on,
// the problem is logged and counted (CoreDNS instead reloads into a crash loop on every replica:
// coredns#2339).

const { createHash } = process.getBuiltinModule('node:crypto');
const { readFileSync } = process.getBuiltinModule('node:fs');
import type { ConfigChangeHandler, ConfigSync } from '../config/sync.ts';
import type { KubeDnsConfig } from '../config/config.ts';
import { parseCorefile } from '../corefile/read.ts';
import type { Logger } from '../log/log.ts';
import type { ForwardPolicy } from '../forward/forward.ts';
import { kubeDnsCorefile } from './corefile.ts';
import type { KubeDnsCorefile, KubeDnsCorefileContext } from './corefile.ts';

/** What a reload applies: the routes and the visibility policy. Everything else of a plan takes a start. */
export function corefileConfig(k: KubeDnsCorefile): KubeDnsConfig {
  return { stubDomains: new Map(k.stubDomains), upstreamNameservers: [...k.upstreams], federations: new Map(), forwardExcept: [...k.forwardExcept], visibility: k.visibility };
}

/** What a reload puts in place of the running plugins (KubeDns.replacePlugins). */
const PLUGIN_FIELDS = ['any', 'chaos', 'rewrite', 'template', 'hosts', 'file', 'plugins'] as const;

/** The forward cache's zones by name (a stub block's `disable`, or its having no cache): a reload applies them with the plugins. */
const cacheRoutes = (k: KubeDnsCorefile) => (k.cache === null ? null : { disable: k.cache.disable, bypass: k.cache.bypass });
const pluginsOf = (k: KubeDnsCorefile) => JSON.stringify([...PLUGIN_FIELDS.map((f) => k[f]), cacheRoutes(k)]);

/** The plan without what a reload applies, to tell what changed (a visibility block's presence takes a start: it starts the Pod watch). */
function startOnly(k: KubeDnsCorefile): string {
  const cache = k.cache === null ? null : { ...k.cache, disable: undefined, bypass: undefined };
  return JSON.stringify({ ...k, cache, upstreams: undefined, stubDomains: undefined, stubPolicies: undefined, forwardExcept: undefined, visibility: k.visibility !== null, ...Object.fromEntries(PLUGIN_FIELDS.map((f) => [f, undefined])) });
}

/** Reads the Corefile at `path` once and plans it (imports relative to its folder; a glob matching nothing is logged); its text too, for CorefileSync. */
export function planCorefileAt(path: string, ctx: KubeDnsCorefileContext, log: Logger): { plan: KubeDnsCorefile; text: string } {
  const text = readFileSync(path, 'utf8');
  return { plan: planText(path, text, ctx, log), text };
}

/** The Corefile at `path`, read as `text`, planned. */
function planText(path: string, text: string, ctx: KubeDnsCorefileContext, log: Logger): KubeDnsCorefile {
  return kubeDnsCorefile(parseCorefile(text, { path, warn: (problem) => log.warn('Corefile import', { problem }) }), ctx);
}

export class CorefileSync implements ConfigSync {
  invalidUpdates = 0;
  /** Called with a reloaded plan whose plugins (PLUGIN_FIELDS) changed: the caller puts them in place. */
  onPlugins: ((plan: KubeDnsCorefile) => void) | null = null;
  private running: KubeDnsCorefile;
  private text: string;
  private timer: NodeJS.Timeout | undefined;
  private readonly path: string;
  private readonly ctx: KubeDnsCorefileContext;
  private readonly log: Logger;

  /** `started`: the plan the process started with and the text it was read from (planCorefileAt). */
  constructor(path: string, started: { plan: KubeDnsCorefile; text: string }, ctx: KubeDnsCorefileContext, log: Logger) {
    this.path = path;
    this.running = started.plan;
    this.text = started.text;
    this.ctx = ctx;
    this.log = log;
  }

  start(onChange: ConfigChangeHandler): void {
    if (this.running.reloadMs === null) return;
    this.timer = setInterval(() => this.check(onChange), this.running.reloadMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The forward policy of the stub block of `zone` in the Corefile in force. */
  stubPolicy(zone: string): ForwardPolicy | undefined {
    return this.running.stubPolicies[zone];
  }

  current(): KubeDnsConfig {
    return corefileConfig(this.running);
  }

  describe(): string {
    return `Corefile ${this.path}`;
  }

  /** Reads the Corefile again; a changed one is applied when it plans and differs only in its routes. */
  private check(onChange: ConfigChangeHandler): void {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      return this.refuse(`cannot read it: ${(err as Error).message}`);
    }
    if (text === this.text) return;
    this.text = text;
    let next: KubeDnsCorefile;
    try {
      next = planText(this.path, text, this.ctx, this.log);
    } catch (err) {
      return this.refuse((err as Error).message);
    }
    if (startOnly(next) !== startOnly(this.running)) return this.refuse('it changes more than the upstreams, stub blocks and the plugins any, chaos, rewrite, template, hosts and file, which takes a restart (kubectl rollout restart)');
    const pluginsChanged = pluginsOf(next) !== pluginsOf(this.running);
    this.running = next;
    if (pluginsChanged) this.onPlugins?.(next);
    onChange(this.current(), createHash('sha256').update(text).digest('hex').slice(0, 12));
  }

  private refuse(problem: string): void {
    this.invalidUpdates++;
    this.log.error('Corefile not reloaded: the running one serves on', { path: this.path, problem });
  }
}
