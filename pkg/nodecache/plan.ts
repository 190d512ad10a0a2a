// A read Corefile → what node-cache serves: per server block key its zone, where it listens, its cache
// policy and its upstreams; one metrics and one health address for the process. The plugins it
// serves are the table below (pkg/corefile: the reader, the planner, the plugins' options); any other
// plugin, option or argument is a CorefileError naming its line, so nothing written is ignored.

import { noArgs, invalid, unserved } from '../corefile/args.ts';
import { CorefileError } from '../corefile/errors.ts';
import { planBlocks } from '../corefile/plan.ts';
import type { Plugin } from '../corefile/plan.ts';
import type { ServerBlock } from '../corefile/read.ts';
import { bindAddresses } from '../corefile/plugins/bind.ts';
import { cacheOptions } from '../corefile/plugins/cache.ts';
import type { CacheOptions } from '../corefile/plugins/cache.ts';
import { healthOptions, prometheusAddress } from '../corefile/plugins/endpoints.ts';
import { FORWARD_DEFAULTS, forwardOptions } from '../corefile/plugins/forward.ts';
import type { ForwardSettings } from '../corefile/plugins/forward.ts';
import type { Upstream } from '../forward/forward.ts';
import { NO_ANSWERING } from '../corefile/answering.ts';
import type { AnsweringPlan } from '../corefile/answering.ts';
import { bufsizeOf } from '../corefile/plugins/bufsize.ts';
import { chaosOptions } from '../corefile/plugins/chaos.ts';
import { hostsOptions } from '../corefile/plugins/hosts.ts';
import { fileOptions } from '../corefile/plugins/file.ts';
import { logRules } from '../corefile/plugins/log.ts';
import { rewriteRule } from '../corefile/plugins/rewrite.ts';
import { templateRule } from '../corefile/plugins/template.ts';
import { CHAOS_DEFAULTS } from '../chaos/chaos.ts';
import type { QueryLogRule } from '../querylog/querylog.ts';

export type CachePlan = CacheOptions;
export type { AnsweringPlan } from '../corefile/answering.ts';

export interface ZonePlan {
  /** Lowercase, no trailing dot; '' is the root. */
  zone: string;
  port: number;
  /** `bind`: addresses; empty = every address. */
  bind: string[];
  /** null: no `cache` (every query forwarded). */
  cache: CachePlan | null;
  upstreams: Upstream[];
  /** The forward's options, for its Forwarder. */
  forwarding: ForwardSettings;
  /** forward's `except`: zones whose names are not forwarded (SERVFAIL). */
  except: string[];
  logErrors: boolean;
  /** `log`: its rules (none: no query log). */
  log: QueryLogRule[];
  /** any, chaos, rewrite, template, hosts: answered before the cache and forward. */
  answering: AnsweringPlan;
  /** `bufsize`: the largest UDP reply; null: 4096. */
  bufsize: number | null;
  /** `loop`: probe the upstreams for a forwarding loop back to us. */
  loopDetect: boolean;
  line: number;
}

export interface NodeCachePlan {
  zones: ZonePlan[];
  /** `prometheus`: host:port, or null. */
  metrics: string | null;
  /** `health`: host:port, or null; its `lameduck` in ms. */
  health: string | null;
  healthLameDuckMs: number;
}

export interface PlanContext {
  /** -dns.port: the port of a key that names none. */
  defaultPort: number;
  /** Reads a resolv.conf named by `forward . /etc/resolv.conf`. */
  resolvServers?: (path: string) => Upstream[];
}

/** node-cache's plugins, in CoreDNS's order; `plan` takes the process-wide ones (metrics, health). */
function plugins(plan: NodeCachePlan, ctx: PlanContext): Plugin<ZonePlan>[] {
  return [
    // We render and apply the Corefile ourselves whenever the ConfigMap changes (the original wrote it
    // for CoreDNS's reload to find): accepted, nothing to do.
    {
      name: 'reload',
      setup: (d) => {
        if (d.args.length > 2 || d.block !== null) throw invalid(d, 'takes at most an interval and a jitter');
      },
    },
    { name: 'bufsize', setup: (d, z) => (z.bufsize = bufsizeOf(d)) },
    { name: 'bind', setup: (d, z) => z.bind.push(...bindAddresses(d)) },
    {
      name: 'health',
      setup: (d) => {
        const h = healthOptions(d, plan.health);
        plan.health = h.address;
        if (d.block !== null) plan.healthLameDuckMs = h.lameDuckMs;
      },
    },
    { name: 'prometheus', setup: (d) => (plan.metrics = prometheusAddress(d, plan.metrics)) },
    { name: 'errors', setup: (d, z) => (noArgs(d), (z.logErrors = true)) },
    { name: 'log', setup: (d, z) => z.log.push(...logRules(d)) },
    { name: 'any', setup: (d, z) => (noArgs(d), (z.answering.any = true)) },
    { name: 'chaos', setup: (d, z) => z.answering.chaos.push({ zones: null, answers: chaosOptions(d, CHAOS_DEFAULTS) }) },
    { name: 'rewrite', setup: (d, z) => z.answering.rewrite.push(rewriteRule(d)) },
    { name: 'cache', setup: (d, z) => (z.cache = cacheOptions(d)) },
    { name: 'template', setup: (d, z) => z.answering.template.push(templateRule(d, z.zone)) },
    { name: 'hosts', setup: (d, z) => (z.answering.hosts = hostsOptions(d, z.zone)) },
    // The block's cache is planned before (CoreDNS's order): it caps what the file answers.
    { name: 'file', setup: (d, z) => z.answering.file.push({ ...fileOptions(d, z.zone), cache: z.cache }) },
    { name: 'loop', setup: (d, z) => (noArgs(d), (z.loopDetect = true)) },
    {
      name: 'forward',
      setup: (d, z) => {
        const f = forwardOptions(d, ctx.resolvServers);
        // FROM `.` or the block's own zone: both mean every name the block gets.
        if (f.from !== '' && f.from !== z.zone) throw unserved(d, `forward for ${d.args[0]} inside the block of ${z.zone || '.'}`);
        [z.upstreams, z.forwarding, z.except] = [f.upstreams, f.settings, f.except];
      },
    },
  ];
}

/** What a Corefile asks of node-cache; throws CorefileError at the first line it cannot serve. */
export function planCorefile(blocks: readonly ServerBlock[], ctx: PlanContext): NodeCachePlan {
  const plan: NodeCachePlan = { zones: [], metrics: null, health: null, healthLameDuckMs: 0 };
  plan.zones = planBlocks(blocks, {
    program: 'node-cache',
    plugins: plugins(plan, ctx),
    defaultPort: ctx.defaultPort,
    zone: ({ zone, port }, block) => ({ zone, port, bind: [], cache: null, upstreams: [], forwarding: FORWARD_DEFAULTS, except: [], logErrors: false, log: [], answering: { ...NO_ANSWERING, chaos: [], rewrite: [], template: [], file: [] }, bufsize: null, loopDetect: false, line: block.line }),
    done: (z, block) => {
      if (z.upstreams.length === 0) throw new CorefileError('COREFILE_INVALID', block, `the block of ${z.zone || '.'} has no forward: node-cache serves no zone of its own`);
    },
  });
  return plan;
}
