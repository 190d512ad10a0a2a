// kube-dns given CoreDNS's `-conf FILE` (issue 25): the plugins it serves from a Corefile, through
// pkg/corefile's reader and planner, and what they make of kube-dns. The shape served today is the one
// every distribution ships (kubeadm's Corefile and its kin): one block holds `kubernetes` with the
// cluster zone and the reverse zones falling through; the root's `forward` is the upstream; a block of
// another zone with only `forward` (and `errors`) is a stub domain; everything on one port. Anything
// else is refused at its line, never ignored.

import { inZone } from '../dns/names.ts';
import { duration, noArgs, unserved } from '../corefile/args.ts';
import { CorefileError } from '../corefile/errors.ts';
import type { Place } from '../corefile/errors.ts';
import { planBlocks } from '../corefile/plan.ts';
import type { Plugin } from '../corefile/plan.ts';
import type { Directive, ServerBlock } from '../corefile/read.ts';
import { bindAddresses } from '../corefile/plugins/bind.ts';
import { cacheOptions } from '../corefile/plugins/cache.ts';
import type { CacheOptions } from '../corefile/plugins/cache.ts';
import { endpointAddress, healthOptions, prometheusAddress } from '../corefile/plugins/endpoints.ts';
import { FORWARD_DEFAULTS, forwardOptions } from '../corefile/plugins/forward.ts';
import type { ForwardSettings } from '../corefile/plugins/forward.ts';
import type { ForwardPolicy } from '../forward/forward.ts';
import type { ForwardOptions } from '../corefile/plugins/forward.ts';
import { hostsOptions } from '../corefile/plugins/hosts.ts';
import type { HostsOptions } from '../corefile/plugins/hosts.ts';
import { kubernetesOptions } from '../corefile/plugins/kubernetes.ts';
import { logRules } from '../corefile/plugins/log.ts';
import { rewriteRule } from '../corefile/plugins/rewrite.ts';
import { chaosOptions } from '../corefile/plugins/chaos.ts';
import { bufsizeOf } from '../corefile/plugins/bufsize.ts';
import { templateRule } from '../corefile/plugins/template.ts';
import { visibilityOptions } from '../corefile/plugins/visibility.ts';
import type { VisibilityPolicy } from '../config/model.ts';
import { fileOptions } from '../corefile/plugins/file.ts';
import type { ZoneFileOptions } from '../zonefile/handler.ts';
import type { PlannedZoneFile } from '../corefile/answering.ts';
import type { TemplateRule } from '../template/rules.ts';
import { CHAOS_DEFAULTS } from '../chaos/chaos.ts';
import type { ChaosAnswers } from '../chaos/chaos.ts';
import type { NameRule } from '../rewrite/rules.ts';
import type { QueryLogBlock, QueryLogRule } from '../querylog/querylog.ts';
import type { KubernetesOptions } from '../corefile/plugins/kubernetes.ts';
import { normalizeDomain } from '../config/config.ts';
import { formatUpstream } from '../forward/forward.ts';
import type { Upstream } from '../forward/forward.ts';

/** One server block key as kube-dns's plugins saw it. */
interface Block extends Place {
  zone: string;
  port: number;
  bind: string[];
  kubernetes: KubernetesOptions | null;
  forward: ForwardOptions | null;
  cache: CacheOptions | null;
  hosts: HostsOptions | null;
  log: QueryLogRule[];
  rewrite: NameRule[];
  template: TemplateRule[];
  zoneFiles: ZoneFileOptions[];
  chaos: ChaosAnswers | null;
  /** Plugin names used, for the checks of the whole. */
  used: Set<string>;
}

/** What a Corefile makes of kube-dns. */
export interface KubeDnsCorefile {
  domain: string;
  ttl: number;
  pods: KubernetesOptions['pods'];
  kubeconfig: string | null;
  kubeconfigContext: string | null;
  /** kubernetes `namespaces`: the only namespaces whose Services and pods are answered; null: all. */
  namespaces: string[] | null;
  endpoint: string | null;
  /** kubernetes `endpoint_pod_names` and `noendpoints`. */
  endpointPodNames: boolean;
  noEndpoints: boolean;
  port: number;
  /** `bind`: the one address; null: every address. */
  bind: string | null;
  /** The root's `forward`: its upstreams as ip:port (none: none for names outside the cluster). */
  upstreams: string[];
  /** The root's forward options (CoreDNS's defaults without one). */
  forwarding: ForwardSettings;
  /** Stub blocks' forward policies, by zone (the rest of their options are the root's). */
  stubPolicies: Record<string, ForwardPolicy>;
  /** Blocks of other zones that only forward: zone → servers (ip:port). */
  stubDomains: Map<string, string[]>;
  /** forward `except` zones, each from the block whose names it holds: never forwarded (SERVFAIL). */
  forwardExcept: string[];
  /** `cache` on what is forwarded; null: nothing forwarded is kept. */
  cache: CacheOptions | null;
  /** `hosts` in the cluster's block: answered before the cluster and the upstreams. */
  hosts: HostsOptions | null;
  /** `rewrite` in the cluster's block: its name rules, in the order written. */
  rewrite: NameRule[];
  /** `template` in the cluster's block, in the order written. */
  template: TemplateRule[];
  /** `file`: zone files, in the cluster's block or a block of their own, each for its zones. */
  file: PlannedZoneFile[];
  /** `log`: every block's rules (none: no query log). */
  queryLog: QueryLogBlock[] | null;
  /** `chaos`: in the cluster's block (zones null: its names), or in a block of its own zones. */
  chaos: { zones: string[] | null; answers: ChaosAnswers }[];
  /** `autopath @kubernetes`: a pod's search walk answered at its first query (pkg/autopath). */
  autopath: boolean;
  /** `visibility { ... }` (ours): which namespaces' names each namespace's pods may resolve; null: no policy. */
  visibility: VisibilityPolicy | null;
  /** kubernetes `fallthrough` for the cluster zone: its names no Service holds are forwarded. */
  clusterFallthrough: boolean;
  /** `any`: ANY questions get RFC 8482's HINFO. */
  any: boolean;
  /** `loop`: the upstreams probed for a loop back to us. */
  loop: boolean;
  /** `bufsize`: the largest UDP reply; null: 4096. */
  bufsize: number | null;
  /** `loadbalance`: A and AAAA answers rotated. */
  roundRobin: boolean;
  health: { address: string; lameDuckMs: number } | null;
  ready: string | null;
  metrics: string | null;
  /** `reload`: the Corefile read again this often (ms); null: never. */
  reloadMs: number | null;
  /** The zone of the block that holds `kubernetes` ('' for the root), and the plugins that block uses (CoreDNS's metrics name them). */
  clusterBlockZone: string;
  plugins: string[];
}

export interface KubeDnsCorefileContext {
  /** -dns.port: the port of a key that names none. */
  defaultPort: number;
  /** Reads a resolv.conf named by `forward . /etc/resolv.conf`. */
  resolvServers?: (path: string) => Upstream[];
}

/** CoreDNS's reload interval when none is written, and the least it takes. */
const RELOAD_DEFAULT_MS = 30_000;
const RELOAD_MIN_MS = 2000;
const isReverse = (z: string) => /(^|\.)(in-addr|ip6)\.arpa$/.test(z);

/** kube-dns's plugins, in CoreDNS's order; `whole` takes the process-wide ones. */
function plugins(whole: KubeDnsCorefile, ctx: KubeDnsCorefileContext): Plugin<Block>[] {
  const use = (name: string, setup: Plugin<Block>['setup']): Plugin<Block> => ({ name, setup: (d, b) => (b.used.add(name), setup(d, b)) });
  return [
    use('reload', (d) => {
      if (d.args.length > 2 || d.block !== null) throw unserved(d, 'a reload jitter or block');
      whole.reloadMs = d.args.length > 0 ? duration(d, d.args[0], 'the interval', RELOAD_MIN_MS) : RELOAD_DEFAULT_MS;
    }),
    use('bufsize', (d) => {
      const size = bufsizeOf(d);
      if (whole.bufsize !== null && whole.bufsize !== size) throw unserved(d, 'bufsize differing by block (kube-dns serves every block on one server)');
      whole.bufsize = size;
    }),
    use('bind', (d, b) => b.bind.push(...bindAddresses(d))),
    use('ready', (d) => (noBlock(d), (whole.ready = endpointAddress(d, whole.ready, ':8181')))),
    use('health', (d) => (whole.health = healthOptions(d, whole.health?.address ?? null))),
    use('prometheus', (d) => (whole.metrics = prometheusAddress(d, whole.metrics))),
    // kube-dns logs its failures itself.
    use('errors', (d) => noArgs(d)),
    use('log', (d, b) => b.log.push(...logRules(d))),
    use('any', (d) => (noArgs(d), (whole.any = true))),
    use('chaos', (d, b) => (b.chaos = chaosOptions(d, CHAOS_DEFAULTS))),
    use('loadbalance', (d) => {
      if (d.block !== null || d.args.length > 1 || (d.args.length === 1 && d.args[0] !== 'round_robin')) throw unserved(d, `loadbalance \`${d.args.join(' ')}\``);
      whole.roundRobin = true;
    }),
    use('rewrite', (d, b) => b.rewrite.push(rewriteRule(d))),
    use('autopath', (d, b) => {
      const zones = d.args.slice(0, -1).map((z) => (z === '.' ? '' : normalizeDomain(z)));
      if (d.args.at(-1) !== '@kubernetes' || d.block !== null) throw unserved(d, `autopath \`${d.args.join(' ')}\` (kube-dns serves \`autopath @kubernetes\`: the search path of the asking pod)`);
      if (zones.some((z) => z !== b.zone)) throw unserved(d, `autopath for zones other than its block's (${b.zone || '.'})`);
      whole.autopath = true;
    }),
    use('visibility', (d) => (whole.visibility = visibilityOptions(d))),
    use('cache', (d, b) => (b.cache = cacheOptions(d))),
    use('template', (d, b) => b.template.push(templateRule(d, b.zone))),
    use('hosts', (d, b) => (b.hosts = hostsOptions(d, b.zone))),
    use('kubernetes', (d, b) => (b.kubernetes = kubernetesOptions(d, b.zone))),
    use('file', (d, b) => b.zoneFiles.push(fileOptions(d, b.zone))),
    use('loop', (d) => (noArgs(d), (whole.loop = true))),
    use('forward', (d, b) => (b.forward = forwardOptions(d, ctx.resolvServers))),
  ];
}

function noBlock(d: Directive): void {
  if (d.block !== null) throw unserved(d, `a ${d.name} block`);
}

/** A plan before any block: nothing served. */
function unplanned(port: number): KubeDnsCorefile {
  return {
    domain: '', ttl: 0, pods: 'disabled', kubeconfig: null, kubeconfigContext: null, namespaces: null, endpoint: null, endpointPodNames: false, noEndpoints: false, port, bind: null, upstreams: [], forwarding: FORWARD_DEFAULTS, stubPolicies: {},
    stubDomains: new Map(), forwardExcept: [], cache: null, hosts: null, rewrite: [], template: [], file: [], chaos: [], queryLog: null, autopath: false, visibility: null, clusterFallthrough: false, any: false, loop: false, bufsize: null, roundRobin: false, health: null, ready: null, metrics: null, reloadMs: null,
    clusterBlockZone: '', plugins: [],
  };
}

/** What `blocks` make of kube-dns; throws CorefileError at the first line it cannot serve. */
export function kubeDnsCorefile(blocks: readonly ServerBlock[], ctx: KubeDnsCorefileContext): KubeDnsCorefile {
  const whole = unplanned(ctx.defaultPort);
  const planned = planBlocks(blocks, {
    program: 'kube-dns',
    plugins: plugins(whole, ctx),
    defaultPort: ctx.defaultPort,
    zone: ({ zone, port }, block) => ({ zone, port, bind: [], kubernetes: null, forward: null, cache: null, hosts: null, log: [], rewrite: [], template: [], zoneFiles: [], chaos: null, used: new Set<string>(), file: block.file, line: block.line }),
  });
  const cluster = planned.filter((b) => b.kubernetes !== null);
  if (cluster.length !== 1) throw new CorefileError('COREFILE_INVALID', cluster[1] ?? { file: null, line: 1 }, 'kube-dns serves one `kubernetes` (one cluster), in one block');
  const k = clusterOf(cluster[0]);
  Object.assign(whole, { domain: k.domain, clusterFallthrough: k.options.fallthrough.some((z) => z === '' || z === k.domain), ttl: k.options.ttl, pods: k.options.pods, kubeconfig: k.options.kubeconfig, kubeconfigContext: k.options.kubeconfigContext, namespaces: k.options.namespaces, endpoint: k.options.endpoint, endpointPodNames: k.options.endpointPodNames, noEndpoints: k.options.noEndpoints, port: cluster[0].port });
  whole.clusterBlockZone = cluster[0].zone;
  whole.hosts = cluster[0].hosts;
  whole.rewrite = cluster[0].rewrite;
  whole.template = cluster[0].template;
  whole.file.push(...cluster[0].zoneFiles.map((f) => ({ ...f, cache: cluster[0].cache })));
  if (cluster[0].chaos !== null) whole.chaos.push({ zones: null, answers: cluster[0].chaos });
  whole.plugins = KUBE_DNS_COREFILE_PLUGINS.filter((p) => cluster[0].used.has(p));
  // The root's forward first: a stub block's options are checked against it.
  for (const b of [...planned].sort((x, y) => Number(isRootRoute(y, cluster[0])) - Number(isRootRoute(x, cluster[0])))) {
    if (b.port !== whole.port) throw unserved(b, `a second port (${b.port}; the cluster's block is on ${whole.port})`);
    const bind = b.bind.length === 0 ? null : b.bind.join(' ');
    if (b.bind.length > 1 || (whole.bind !== null && bind !== whole.bind)) throw unserved(b, 'more than one bind address');
    whole.bind = bind ?? whole.bind;
    if (isRootRoute(b, cluster[0])) routeRoot(whole, b);
    else otherBlock(whole, b, planned);
  }
  whole.forwardExcept = planned.flatMap((b) => ownExcepts(b, planned));
  if (planned.some((b) => b.log.length > 0)) whole.queryLog = planned.map((b) => ({ zone: b.zone, rules: b.log }));
  return whole;
}

/**
 * A forward's `except` zones that its block serves: not one under a longer block's zone (CoreDNS hands
 * that block those names, whatever this one excepts), nor outside its own.
 */
function ownExcepts(b: Block, planned: readonly Block[]): string[] {
  return b.forward === null ? [] : b.forward.except.filter((z) => servedBy(planned, z) === b);
}

/** The block CoreDNS hands `name`'s queries: the one of the longest zone holding it (null: none). */
function servedBy(planned: readonly Block[], name: string): Block | null {
  let found: Block | null = null;
  for (const o of planned) if (inZone(o.zone, name) && (found === null || o.zone.length > found.zone.length)) found = o;
  return found;
}

/** The cluster's block and the root's carry the default route (names outside the cluster). */
const isRootRoute = (b: Block, cluster: Block) => b === cluster || b.zone === '';

/** The cluster's block: its one cluster zone, and reverse zones that fall through (as kube-dns forwards the addresses it does not hold). */
function clusterOf(b: Block): { domain: string; options: KubernetesOptions } {
  const k = b.kubernetes!;
  const zones = k.zones.filter((z) => !isReverse(z));
  if (zones.length !== 1 || zones[0] === '') throw unserved(b, `kubernetes for ${zones.length === 0 ? 'no cluster zone' : zones.map((z) => z || '.').join(' ')} (kube-dns serves one cluster zone)`);
  if (b.zone !== '' && b.zone !== zones[0]) throw unserved(b, `kubernetes for ${zones[0]} in the block of ${b.zone}`);
  for (const z of k.zones.filter(isReverse)) {
    if (!k.fallthrough.some((f) => inZone(f, z))) throw unserved(b, `the reverse zone ${z} without \`fallthrough ${z}\` (kube-dns hands addresses outside the cluster on)`);
  }
  return { domain: zones[0], options: k };
}

/** The root's (or the cluster block's) forward and cache: names outside the cluster. */
function routeRoot(whole: KubeDnsCorefile, b: Block): void {
  if (b.kubernetes === null && b.chaos !== null) whole.chaos.push({ zones: [b.zone], answers: b.chaos });
  if (b.kubernetes === null) whole.file.push(...b.zoneFiles.map((f) => ({ ...f, cache: b.cache })));
  for (const p of ['hosts', 'rewrite', 'template', 'autopath', 'visibility'] as const) {
    if (b.kubernetes === null && b.used.has(p)) throw unserved(b, `${p} in the block of ${b.zone || '.'} apart from kubernetes' (kube-dns serves ${p} in the cluster's block)`);
  }
  if (b.forward !== null) {
    if (b.forward.from !== '' && b.forward.from !== b.zone) throw unserved(b, `forward for ${b.forward.from} inside the block of ${b.zone || '.'}`);
    whole.upstreams = b.forward.upstreams.map(formatUpstream);
    whole.forwarding = b.forward.settings;
  }
  // kube-dns's own answers are kept until the cluster changes them whatever the cache says: its
  // zones and `disable` are about what is forwarded (which a cache of CoreDNS's keeps the same way).
  if (b.cache !== null) whole.cache = { ...b.cache, disable: { success: [...b.cache.disable.success], denial: [...b.cache.disable.denial] }, bypass: [] };
}

/** What a block of another zone may hold: its forward (a stub domain), chaos, and what applies to the whole process. */
const OTHER_BLOCK_PLUGINS = ['forward', 'file', 'cache', 'chaos', 'bufsize', 'errors', 'log', 'loop', 'loadbalance', 'bind', 'health', 'ready', 'prometheus', 'reload'];

/** A block of another zone: a stub domain when it forwards; chaos answered for its names. */
function otherBlock(whole: KubeDnsCorefile, b: Block, planned: readonly Block[]): void {
  const others = [...b.used].filter((p) => !OTHER_BLOCK_PLUGINS.includes(p));
  if ((b.forward === null && b.chaos === null && b.zoneFiles.length === 0) || others.length > 0) throw unserved(b, `the block of ${b.zone}${others.length > 0 ? ` with ${others.join(', ')}` : ' without forward'} (kube-dns serves another zone's block as a stub domain: forward, file and chaos)`);
  if (b.chaos !== null) whole.chaos.push({ zones: [b.zone], answers: b.chaos });
  whole.file.push(...b.zoneFiles.map((f) => ({ ...f, cache: b.cache })));
  // One cache keeps what every route forwards: a stub block's must be the root's (OpenShift writes the
  // same in each; the Kubernetes docs' stub example writes kubeadm's `cache 30`) but for its `disable`,
  // which holds for names, so the block's (of its own zone) join the one cache's.
  const kept = (c: CacheOptions | null) => JSON.stringify(c === null ? null : { ...c, disable: null, bypass: null });
  if (b.cache !== null && kept(b.cache) !== kept(whole.cache)) throw unserved(b, `a cache in the block of ${b.zone} other than the root's (kube-dns keeps what it forwards in one cache)`);
  if (b.cache !== null && whole.cache !== null) {
    for (const kind of ['success', 'denial'] as const) whole.cache.disable[kind].push(...b.cache.disable[kind].map((z) => (z === '' ? b.zone : z)).filter((z) => servedBy(planned, z) === b));
  }
  // A stub block without a cache: what it forwards passes the one cache untouched.
  if (b.cache === null && b.forward !== null && whole.cache !== null) whole.cache.bypass.push(b.zone);
  if (b.forward === null) return;
  if (b.forward.from !== '' && b.forward.from !== b.zone) throw unserved(b, `forward for ${b.forward.from} inside the block of ${b.zone}`);
  // One forwarder serves every route: what a stub block's forward writes must be the root's, but its policy.
  const written = (Object.keys(FORWARD_DEFAULTS) as (keyof ForwardSettings)[]).filter((f) => f !== 'policy' && JSON.stringify(b.forward!.settings[f]) !== JSON.stringify(FORWARD_DEFAULTS[f]));
  const differing = written.filter((f) => JSON.stringify(b.forward!.settings[f]) !== JSON.stringify(whole.forwarding[f]));
  if (differing.length > 0) throw unserved(b, `forward options in the stub block of ${b.zone} other than the root's (${differing.join(', ')}; kube-dns forwards every zone with one set, but policy)`);
  whole.stubPolicies[b.zone] = b.forward.settings.policy;
  whole.stubDomains.set(b.zone, b.forward.upstreams.map(formatUpstream));
}

/** The plugins kube-dns serves from a Corefile, in CoreDNS's order (`kube-dns -plugins`). */
export const KUBE_DNS_COREFILE_PLUGINS: readonly string[] = plugins(unplanned(53), { defaultPort: 53 }).map((p) => p.name);
