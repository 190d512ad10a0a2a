// A planned Corefile served with dnscache's engine: per zone a CachingHandler (its cache policy, its
// own Forwarder with the zone's upstreams, TCP with force_tcp), one answer cache shared by all of them
// (an entry's lifetime was set by its zone's policy when it was kept), and one DnsServer per address
// and port the zones bind, routing each query to the longest zone of that listener that holds its name.
// Every listener binds with SO_REUSEPORT: a new node-cache (a DaemonSet surge) serves beside the old.

import { AnswerCache } from '../dns/answer-cache.ts';
import { DnsServer } from '../dns/server.ts';
import type { Handler, ReplyHook } from '../dns/server.ts';
import { chain } from '../dns/chain.ts';
import { inZone } from '../dns/names.ts';
import { answeringPlugins } from '../corefile/answering.ts';
import type { AnsweringPlugin } from '../corefile/answering.ts';
import { QueryLog } from '../querylog/querylog.ts';
import { ANSWER_KINDS, CachingHandler } from '../dnscache/handler.ts';
import { LoopDetector } from '../dnscache/loop.ts';
import { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import { cachePolicy } from '../corefile/plugins/cache.ts';
import type { NodeCachePlan, ZonePlan } from './plan.ts';
import type { RequestMetrics } from './request-metrics.ts';
import type { Fairness } from '../dns/fairness.ts';

/** What the shared cache may take in memory, whatever the zones' capacities allow. */
const CACHE_BYTES = 32 * 1024 * 1024;

export interface ServedZone {
  plan: ZonePlan;
  forwarder: Forwarder;
  handler: CachingHandler;
  /** The zone's answering plugins (any, chaos, rewrite, template, hosts), then its handler. */
  answer: Handler;
  plugins: AnsweringPlugin[];
  loop: LoopDetector | undefined;
}

/** The handler of one listener: the longest of its zones that holds the name answers. */
function router(zones: readonly ServedZone[]): Handler {
  const longestFirst = [...zones].sort((a, b) => b.plan.zone.length - a.plan.zone.length);
  return (q) => {
    // q.qname is canonical: lowercase, no trailing dot.
    for (const z of longestFirst) if (inZone(z.plan.zone, q.qname)) return z.answer(q);
    return null; // no zone here holds it: CoreDNS answers REFUSED; a dropped query costs the asker the same retry
  };
}

/** `log`: one query log over every zone's rules (CoreDNS's format); undefined when none writes one. */
function queryLog(zones: readonly ServedZone[]): ReplyHook | undefined {
  if (zones.every((z) => z.plan.log.length === 0)) return undefined;
  return new QueryLog(zones.map((z) => ({ zone: z.plan.zone, rules: z.plan.log }))).onReply;
}

/** `bufsize`: a listener's UDP replies no larger than the least its zones write. */
function bufsize(zones: readonly ServedZone[]): number | undefined {
  const sizes = zones.flatMap((z) => (z.plan.bufsize === null ? [] : [z.plan.bufsize]));
  return sizes.length === 0 ? undefined : Math.min(...sizes);
}

export interface ZoneEngineOptions {
  /** Where every listener counts its replies, by zone (the zone's index tags its answers). */
  metrics?: RequestMetrics;
  /** Every listener's misses shared between askers. */
  fairness?: Fairness;
  /**
   * The cluster DNS Service's address: what goes there carries the asker's address (an EDNS Client
   * Subnet, as dnscache --add-subnet), so kube-dns knows the pod behind the node; a reply scoped to
   * it is kept for that pod alone. Nothing else is sent an address.
   */
  askersTo?: string;
}

export class ZoneEngine {
  readonly cache: AnswerCache;
  readonly zones: ServedZone[];
  private readonly servers: DnsServer[];

  constructor(plan: NodeCachePlan, log: Logger, o: ZoneEngineOptions = {}) {
    const { metrics, fairness, askersTo } = o;
    const capacity = plan.zones.reduce((n, z) => n + (z.cache === null ? 0 : z.cache.successCapacity + z.cache.denialCapacity), 0);
    this.cache = new AnswerCache({ maxEntries: capacity, maxBytes: capacity > 0 ? CACHE_BYTES : 0 });
    this.zones = plan.zones.map((z, i) => {
      const zlog = log.child(z.zone || '.');
      // Only a zone that forwards to the cluster DNS passes askers' addresses, and keeps replies per asker.
      const addSubnet = askersTo !== undefined && askersTo !== '' && z.upstreams.some((u) => u.host === askersTo);
      const forwarder = new Forwarder({ ...z.forwarding, takesAskerAt: (host) => addSubnet && host === askersTo, log: zlog.child('forward') });
      forwarder.setUpstreams(z.upstreams);
      forwarder.setStubDomains(new Map(), z.except);
      const loop = z.loopDetect ? new LoopDetector(forwarder, zlog.child('loop')) : undefined;
      const handler = new CachingHandler({ cache: this.cache, policy: cachePolicy(z.cache), forwarder, log: zlog, loop, tagBase: i * ANSWER_KINDS, addSubnet });
      const counts = metrics === undefined ? undefined : { metrics: metrics.answering, server: `dns://${z.bind[0] ?? '0.0.0.0'}:${z.port}` };
      const plugins = answeringPlugins(z.answering, z.cache, zlog, counts);
      return { plan: z, forwarder, handler, answer: chain(plugins.map((p) => p.handler), handler.handle), plugins, loop };
    });
    const listeners = new Map<string, { address: string; port: number; zones: ServedZone[] }>();
    for (const z of this.zones) {
      for (const address of z.plan.bind.length > 0 ? z.plan.bind : ['0.0.0.0']) {
        const key = `${address}#${z.plan.port}`;
        const l = listeners.get(key) ?? { address, port: z.plan.port, zones: [] };
        l.zones.push(z);
        listeners.set(key, l);
      }
    }
    const zoneNames = this.zones.map((z) => ({ zone: z.plan.zone, cached: z.plan.cache !== null }));
    const onReply = queryLog(this.zones);
    this.servers = [...listeners.values()].map(
      (l) =>
        new DnsServer({ handler: router(l.zones), address: l.address, port: l.port, answerCache: this.cache, reusePort: true, joinsPort: true, observer: metrics?.observer(l.address, l.port, zoneNames, this.cache), onReply, maxUdpSize: bufsize(l.zones), fairness }),
    );
  }

  /** Binds every listener (one that fails: all closed, rejects); then the loop probes. */
  async start(): Promise<{ address: string; port: number }[]> {
    const bound: { address: string; port: number }[] = [];
    try {
      for (const s of this.servers) bound.push(await s.listen());
    } catch (err) {
      await this.stop();
      throw err;
    }
    for (const z of this.zones) void z.loop?.probe(z.plan.upstreams).catch(() => undefined);
    return bound;
  }

  /** Stops taking queries, answers those in flight, closes every socket. */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
    await Promise.all(this.zones.map((z) => z.forwarder.close()));
    for (const z of this.zones) for (const p of z.plugins) p.close();
  }
}
