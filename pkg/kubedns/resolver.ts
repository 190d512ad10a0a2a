// The kube-dns handler: decides, for each question the answer cache could not serve, whether it is
// ours (cluster zone, reverse map, CHAOS), refused, or forwarded upstream, and builds the answer.

import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Edns, Message, ResourceRecord } from '../dns/message.ts';
import { OPTION_ECS } from '../dns/question.ts';
import type { OptView } from '../dns/question.ts';
import { isLoopback } from '../dns/ip.ts';
import { encodeMessage, parseMessage } from '../dns/codec.ts';
import type { Answer, Query } from '../dns/server.ts';
import { ipFromReverseName } from '../cluster/ip.ts';
import { ZONE_WIDE } from '../zone/zone.ts';
import type { LookupResult, Zone } from '../zone/zone.ts';
import { ForwardError } from '../forward/forward.ts';
import { chaosTexts } from '../chaos/chaos.ts';
import { clampTtl, prepareForCache, prepareForKeeping, questionKey } from '../dnscache/cache.ts';
import { StaleReplies } from '../dnscache/stale.ts';
import type { CachePolicy } from '../dnscache/cache.ts';
import type { LoopDetector } from '../dnscache/loop.ts';
import type { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';
import type { NodeTopology } from '../cluster/model.ts';
import { federationAnswer, federationQuery } from './federation.ts';
import type { ServiceEntryNames } from '../serviceentry/names.ts';
import { askerIPv4, firstCandidate, restOfWalk, WALK_UPSTREAM_BUDGET_MS } from '../autopath/search.ts';
import type { Autopath } from '../autopath/autopath.ts';
import type { PodIndex } from '../autopath/pod-index.ts';
import { ipv4OfAddress } from '../autopath/pod-index.ts';
import type { VisibilityPolicy } from '../config/model.ts';
import { ownerOf, sees } from '../visibility/visibility.ts';

/**
 * The cache group of ServiceEntry answers outside the cluster zone; inside it an answer rests on no
 * Service holding the name, so it is ZONE_WIDE (dropped by any zone change). A change to any entry
 * drops both groups (entries are few).
 */
export const SERVICE_ENTRY_GROUPS: readonly string[] = ['\u0001serviceentries', ZONE_WIDE];

/** Where an answer came from, as the original's SkyDNS metrics label it. */
export type System = 'auth' | 'reverse' | 'recursive' | 'chaos' | 'refused';
/** Every System; an answer's Answer.tag is its index here, so a reply from the cache counts alike. */
export const SYSTEMS: readonly System[] = ['auth', 'reverse', 'recursive', 'chaos', 'refused'];
const SYSTEM_TAG = Object.fromEntries(SYSTEMS.map((s, i) => [s, i])) as Record<System, number>;

/** What federation answers need from the program, read at query time. */
export interface FederationContext {
  /** Name → domain; empty when no federation is configured (then nothing else is asked). */
  federations(): ReadonlyMap<string, string>;
  /** Does the local service have usable endpoints? */
  hasEndpoints(namespace: string, service: string): boolean;
  /** Zone and region of the first labelled node, or null. */
  topology(): NodeTopology | null;
}

export interface ResolverOptions {
  zone: Zone;
  federation?: FederationContext;
  forwarder: Forwarder;
  isSynced: () => boolean;
  /** CHAOS version.bind answer. */
  version: string;
  /**
   * Class CH questions: answered here (version.bind, hostname.bind; the rest REFUSED), or, as in a
   * Corefile, where a chaos plugin answers them, forwarded like any other. Default true.
   */
  answerChaos?: boolean;
  /**
   * A name of the cluster zone that does not exist is asked upstream instead of denied (a Corefile's
   * kubernetes `fallthrough` for its zone; after autopath, as CoreDNS orders them). Default false.
   */
  clusterFallthrough?: boolean;
  log: Logger;
  /** --service-entries: the names ServiceEntries answer for; null when off. */
  serviceEntries?: ServiceEntryNames | null;
  /** --autopath: pod addresses and the outcome counter; null when off. */
  autopath?: Autopath | null;
  /**
   * Whether a sender is one of our caches, whose Client Subnet names the pod it asks for (the pod's
   * dnscache on loopback, node-cache from a node: NodeAddresses.trusts). That address is ours: it is
   * never passed on upstream. Default: loopback.
   */
  trustsSubnetOf?: (address: string) => boolean;
  /** The ConfigMap's `visibility` policy as last loaded (null: none, every answer as without it). */
  visibility?: () => VisibilityPolicy | null;
  /** Pod addresses → namespaces (the Pod watch): whose pod asks, for the policy; none: every asker unknown. */
  pods?: Pick<PodIndex, 'namespaceOf' | 'namespaceNumberOf'> | null;
  /**
   * A Corefile's `cache`: forwarded replies kept under this policy (their TTLs clamped to it); absent:
   * none kept (the pod's cache in front keeps them).
   */
  forwardCache?: CachePolicy;
  /** A Corefile's `loop`: our own loop probes coming back are dropped unanswered. */
  loop?: LoopDetector;
}

const REVERSE_SUFFIXES = ['.in-addr.arpa', '.ip6.arpa'];

function isReverse(qname: string): boolean {
  return REVERSE_SUFFIXES.some((s) => qname.endsWith(s));
}

function reply(rcode: number, opts: Partial<Message> = {}): Message {
  return { ...emptyMessage(), qr: true, ra: true, rcode, ...opts };
}

/** The reply a zone lookup makes (its ExternalName not chased yet). */
function lookupReply(r: LookupResult): Message {
  return reply(r.rcode, { aa: r.aa, answers: r.answers, authorities: r.authorities, additionals: r.additionals });
}

/** An answer that holds for its asker alone: never cached, kept by a cache in front for that asker only. */
function scoped(a: Answer): Answer {
  return { ...a, cacheable: false, below: undefined, group: undefined, clientScope: 32 };
}

/** An answer for every asker of the query's namespace: kept under it (the server's cache partition, askerPartition). */
function partitioned(a: Answer): Answer {
  return a.cacheable === true ? { ...a, partitioned: true } : a;
}

export class Resolver {
  private readonly o: ResolverOptions;
  /** ResolverOptions.forwardCache, as the last reload left it (setForwardCache). */
  private forwardCache: CachePolicy | undefined;
  /** forwardCache's serve_stale: the last good forwarded replies; null when off. */
  private readonly stale: StaleReplies | null;

  /** ResolverOptions.trustsSubnetOf. */
  private readonly trusts: (address: string) => boolean;

  constructor(opts: ResolverOptions) {
    this.o = opts;
    this.trusts = opts.trustsSubnetOf ?? isLoopback;
    this.forwardCache = opts.forwardCache;
    this.stale = opts.forwardCache === undefined ? null : StaleReplies.of(opts.forwardCache);
  }

  /**
   * A reload's forward cache: the same sizes and serve-stale (a start's), other zones bypassed or
   * disabled (a stub block added or changed).
   */
  setForwardCache(policy: CachePolicy | undefined): void {
    this.forwardCache = policy;
  }

  /** Questions answered stale (serve_stale). */
  staleServed(): number {
    return this.stale?.served ?? 0;
  }

  readonly handle = (q: Query): Answer | null | Promise<Answer> => {
    const { type, class: qclass } = q.question;
    if (this.o.loop?.caught(q.qname, type, qclass)) return null;
    if (qclass === Class.CH) return this.o.answerChaos === false ? this.forward(q, 'recursive') : this.chaos(q);
    if (qclass !== Class.IN && qclass !== Class.ANY) return this.refuse();
    if (type === Type.AXFR || type === Type.IXFR) return this.refuse();
    if (this.o.zone.contains(q.qname)) return this.cluster(q);
    if (isReverse(q.qname)) return this.reverse(q);
    return this.serviceEntry(q, SERVICE_ENTRY_GROUPS[0]) ?? this.forward(q, 'recursive');
  };

  private refuse(): Answer {
    return { message: reply(Rcode.REFUSED), cacheable: true, tag: SYSTEM_TAG.refused };
  }

  private chaos(q: Query): Answer {
    const answer = chaosTexts(q.qname, { version: this.o.version, authors: [] });
    if (answer === null || answer.length === 0 || (q.question.type !== Type.TXT && q.question.type !== Type.ANY)) return this.refuse();
    const rr: ResourceRecord = { name: q.qname, type: Type.TXT, class: Class.CH, ttl: 0, data: { texts: answer } };
    return { message: reply(Rcode.NOERROR, { aa: true, answers: [rr] }), cacheable: true, tag: SYSTEM_TAG.chaos };
  }

  /** Until the first sync an empty store must not turn into NXDOMAIN: the client retries elsewhere. */
  private notReady(system: System): Answer {
    return { message: reply(Rcode.SERVFAIL), cacheable: false, tag: SYSTEM_TAG[system] };
  }

  private cluster(q: Query): Answer | Promise<Answer> {
    if (!this.o.isSynced()) return this.notReady('auth');
    const policy = this.o.visibility?.() ?? null;
    if (policy === null) return this.clusterAnswer(q);
    // Under a policy every answer of the zone depends on who asks. Asked through one of our caches,
    // it is scoped to the pod (the cache keeps it for that pod alone); asked directly, it holds for
    // every pod of the asker's namespace (the answer cache's partition: askerPartition). A name the
    // asker may not see is answered as one that does not exist, by the same shared template.
    const viaCache = this.viaOurCache(q);
    const answer = this.hidden(policy, this.askerNamespace(q), q.qname) ? { message: this.nxdomain(), below: this.o.zone.domain, group: ZONE_WIDE, tag: SYSTEM_TAG.auth } : this.clusterAnswer(q);
    const fit = viaCache ? scoped : partitioned;
    return answer instanceof Promise ? answer.then(fit) : fit(answer);
  }

  /**
   * The answer cache's partition of a query under a visibility policy (DnsServer.partitionCache): its
   * asker's namespace, as a number (0: unknown); -1 asked through one of our caches (answers scoped
   * to the pod, never kept here). Read before the cache: the packet's source and Client Subnet only.
   */
  readonly askerPartition = (address: string, view: OptView): number => {
    if (view.ecsFamily !== 0 && this.trusts(address)) return -1;
    const n = this.o.pods?.namespaceNumberOf(ipv4OfAddress(address)) ?? 0;
    return n <= 0xffff ? n : -1;
  };

  /** Whether q came through one of our caches, naming its pod in the Client Subnet. */
  private viaOurCache(q: Query): boolean {
    return q.clientSubnet !== null && this.trusts(q.remoteAddress);
  }

  /** The namespace of q's asker (undefined: not known), for the policy: read once a query. */
  private askerNamespace(q: Query): string | undefined {
    const ip = askerIPv4(q, this.trusts);
    return ip < 0 ? undefined : this.o.pods?.namespaceOf(ip);
  }

  /** Whether the policy hides `name` (a name of the zone) from pods of `asker`. */
  private hidden(policy: VisibilityPolicy, asker: string | undefined, name: string): boolean {
    const owner = ownerOf(name, this.o.zone.domain, this.o.federation?.federations());
    return owner !== null && !sees(policy, asker, owner);
  }

  /** What a name of the zone that does not exist gets (and one hidden by the policy): NXDOMAIN with the zone's SOA. */
  private nxdomain(): Message {
    return reply(Rcode.NXDOMAIN, { aa: true, authorities: [this.o.zone.soaRecord()] });
  }

  private clusterAnswer(q: Query): Answer | Promise<Answer> {
    const feds = this.o.federation?.federations();
    if (feds !== undefined && feds.size > 0) {
      const answer = this.federated(q, feds);
      if (answer !== null) return answer;
    }
    const r = this.o.zone.lookup(q.qname, q.question.type);
    // Kubernetes Services win: a ServiceEntry answers only a cluster name no Service holds.
    if (r.rcode === Rcode.NXDOMAIN) {
      const entry = this.serviceEntry(q, ZONE_WIDE);
      if (entry !== null) return entry;
    }
    const tag = SYSTEM_TAG.auth;
    const message = lookupReply(r);
    // NXDOMAIN and NODATA carry only the zone's SOA: one template for every such name, so a flood of
    // made-up names costs no cache entry each.
    if (r.answers.length === 0 && r.additionals.length === 0) {
      const nxdomain = r.rcode === Rcode.NXDOMAIN;
      // A first candidate asked for a pod by our cache in front: another pod's walk may end elsewhere,
      // so this NXDOMAIN holds for this asker alone (scoped: the cache keeps it for it only).
      const perAsker = nxdomain && this.walkableFor(q);
      const negative = (): Answer | Promise<Answer> =>
        nxdomain && this.o.clusterFallthrough === true ? this.fallThrough(q) : perAsker ? scoped({ message, tag }) : { message, below: this.o.zone.domain, group: ZONE_WIDE, tag };
      const walked = nxdomain ? this.autopath(q) : null;
      if (walked === null) return negative();
      return walked instanceof Promise ? walked.then((a) => a ?? negative()) : walked;
    }
    // Pod records answer any dashed address: a flood of them must not push real names out of the cache.
    // A change to the owning service drops the answer; the rest of the cache stays.
    if (r.chase === null) return { message, cacheable: !r.synthesized, group: r.owner, tag };
    return this.chase(message, r.chase, q.question.type);
  }

  /** A forwarded reply readied for the answer cache (its lifetime, 0: not kept), and kept for serve-stale. */
  private kept(wire: Uint8Array, key: string, qname: string): number {
    const policy = this.forwardCache;
    if (policy === undefined) return 0;
    if (this.stale === null) return prepareForCache(wire, policy, qname);
    const { ttl, ttlOffsets } = prepareForKeeping(wire, policy, qname);
    if (ttl > 0) this.stale.keep(key, wire, ttlOffsets, ttl);
    return ttl;
  }

  /** A cluster name no Service holds, asked upstream; dropped with any change to the zone (a Service of that name may come). */
  private async fallThrough(q: Query): Promise<Answer> {
    return { ...(await this.forward(q, 'recursive')), group: ZONE_WIDE };
  }

  /** Whether `q` is a first candidate that autopath may answer differently for another asker our cache names. */
  private walkableFor(q: Query): boolean {
    const ap = this.o.autopath;
    return ap !== undefined && ap !== null && this.viaOurCache(q) && firstCandidate(q.qname, this.o.zone.domain) !== null;
  }

  /**
   * --autopath: the first candidate of a pod's search walk (`<name>.<ns>.svc.<zone>` from a pod of
   * <ns>) does not exist, so walk the rest here and answer with where the walk ends: a CNAME to the
   * name found and its records, for this asker only. null (today's NXDOMAIN) when the name is no
   * first candidate, the asker is not known to be a pod of <ns>, or the walk ends in NXDOMAIN or a
   * failure (the client's own walk then reaches the same end).
   */
  private autopath(q: Query): Answer | Promise<Answer | null> | null {
    const ap = this.o.autopath;
    if (ap === undefined || ap === null) return null;
    const zone = this.o.zone;
    const first = firstCandidate(q.qname, zone.domain);
    if (first === null) return null;
    const ip = askerIPv4(q, this.trusts);
    const namespace = ip < 0 ? undefined : ap.index.walkerNamespaceOf(ip);
    if (namespace !== first.namespace) {
      if (namespace === undefined) ap.counted('unknown-client');
      return null;
    }
    const qtype = q.question.type;
    const walk = restOfWalk(first.name, zone.domain);
    const policy = this.o.visibility?.() ?? null;
    for (const candidate of walk) {
      if (!zone.contains(candidate)) return this.autopathUpstream(q, candidate);
      // The asker is a pod of `namespace` here: a candidate the policy hides from it does not exist for it.
      if (policy !== null && this.hidden(policy, namespace, candidate)) continue;
      const r = zone.lookup(candidate, qtype);
      if (r.rcode === Rcode.NXDOMAIN) {
        const addresses = this.o.serviceEntries?.lookup(candidate) ?? null;
        if (addresses === null) continue;
        return this.autopathAnswer(q, candidate, reply(Rcode.NOERROR, { aa: true, answers: entryRecords(candidate, qtype, addresses, zone.ttl) }), 'cluster');
      }
      const message = lookupReply(r);
      if (r.chase === null) return this.autopathAnswer(q, candidate, message, 'cluster');
      return this.chase(message, r.chase, qtype).then((a) => this.autopathAnswer(q, candidate, a.message!, 'cluster'));
    }
    ap.counted('nxdomain');
    return null;
  }

  /** The last step of the walk: the name itself, upstream (stub domains honoured). */
  private async autopathUpstream(q: Query, name: string): Promise<Answer | null> {
    const ap = this.o.autopath!;
    if (ap.silence.holding(performance.now())) {
      ap.counted('upstream-silent');
      return null;
    }
    const query = emptyMessage(randomId());
    query.rd = true;
    query.questions.push({ name, type: q.question.type, class: Class.IN });
    let upstream: Message;
    try {
      upstream = parseMessage(await this.o.forwarder.forward(encodeMessage(query).bytes, name, WALK_UPSTREAM_BUDGET_MS));
    } catch (err) {
      const silent = err instanceof ForwardError && err.code === 'FORWARD_OUT_OF_TIME';
      if (silent) ap.silence.heard(performance.now());
      this.o.log.debug(1, 'autopath: forwarding failed, answering as without it', { name, err });
      ap.counted(silent ? 'upstream-silent' : 'failed');
      return null;
    }
    if (upstream.rcode !== Rcode.NOERROR) {
      ap.counted(upstream.rcode === Rcode.NXDOMAIN ? 'nxdomain' : 'failed');
      return null;
    }
    this.capTtls(upstream.answers);
    this.capTtls(upstream.authorities);
    // The upstream's own flags, as CoreDNS's autopath hands on what its forward got.
    const message = reply(Rcode.NOERROR, { aa: upstream.aa, answers: upstream.answers, authorities: upstream.authorities });
    return this.autopathAnswer(q, name, message, 'upstream');
  }

  /**
   * A Corefile's cache caps the TTLs of what comes through it, records fetched for a chased CNAME or
   * an autopath walk too (CoreDNS asks those through its own chain, cache included).
   */
  private capTtls(records: ResourceRecord[]): void {
    const cap = this.forwardCache;
    if (cap !== undefined) for (const rr of records) rr.ttl = clampTtl(rr.ttl, cap);
  }

  /** `message` (the answer for `found`) behind a CNAME from the asked name: this asker's alone. */
  private autopathAnswer(q: Query, found: string, message: Message, outcome: 'cluster' | 'upstream'): Answer {
    this.o.autopath!.counted(outcome);
    const cname: ResourceRecord = { name: q.qname, type: Type.CNAME, class: Class.IN, ttl: this.o.zone.ttl, data: { target: found } };
    message.answers = [cname, ...message.answers];
    return { message, clientScope: 32, tag: SYSTEM_TAG[outcome === 'cluster' ? 'auth' : 'recursive'] };
  }

  /** `<svc>.<ns>.<fed>.svc.<zone>`: a CNAME (TTL 0, as the original), followed; null for other names. */
  private federated(q: Query, feds: ReadonlyMap<string, string>): Answer | Promise<Answer> | null {
    const zone = this.o.zone;
    if (q.qname.length <= zone.domain.length) return null;
    const fq = federationQuery(q.qname.slice(0, -zone.domain.length - 1).split('.'), feds);
    if (fq === null) return null;
    const ctx = this.o.federation!;
    const a = federationAnswer(fq, zone.domain, ctx.hasEndpoints, ctx.topology());
    const tag = SYSTEM_TAG.auth;
    // Never cached: the answer follows endpoints and nodes, which do not invalidate the cache.
    if (a.kind === 'nxdomain') return { message: this.nxdomain(), cacheable: false, tag };
    const qtype = q.question.type;
    const cname: ResourceRecord = { name: q.qname, type: Type.CNAME, class: Class.IN, ttl: 0, data: { target: a.target } };
    const message = reply(Rcode.NOERROR, { aa: true, answers: [cname] });
    if (qtype === Type.CNAME || qtype === Type.ANY) return { message, cacheable: false, tag };
    if (a.kind === 'remote') {
      if (qtype === Type.A || qtype === Type.AAAA) return this.chase(message, a.target, qtype);
      return { message, cacheable: false, tag };
    }
    // The local service: its records follow the CNAME in the same answer, as for an in-zone ExternalName.
    const r = zone.lookup(a.target, qtype);
    message.rcode = r.rcode;
    message.answers.push(...r.answers);
    message.authorities = r.authorities;
    message.additionals = r.additionals;
    if (r.chase !== null) return this.chase(message, r.chase, qtype);
    return { message, cacheable: false, tag };
  }

  /** ExternalName: resolve the CNAME target upstream (stub domains honoured) and append what comes back. */
  private async chase(message: Message, target: string, qtype: number): Promise<Answer> {
    const query = emptyMessage(randomId());
    query.rd = true;
    query.questions.push({ name: target, type: qtype, class: Class.IN });
    try {
      const wire = await this.o.forwarder.forward(encodeMessage(query).bytes, target);
      const upstream = parseMessage(wire);
      this.capTtls(upstream.answers);
      message.answers.push(...upstream.answers);
      if (upstream.rcode === Rcode.NXDOMAIN) message.rcode = Rcode.NXDOMAIN;
    } catch (err) {
      // The CNAME alone still lets the client resolve the target itself.
      this.o.log.debug(1, 'ExternalName target not resolved upstream', { target, err });
    }
    return { message, cacheable: false, tag: SYSTEM_TAG.auth };
  }

  /** A name a ServiceEntry answers for: its addresses of the asked family; any other type is NODATA. null: none does. */
  private serviceEntry(q: Query, group: string): Answer | null {
    const addresses = this.o.serviceEntries?.lookup(q.qname) ?? null;
    if (addresses === null) return null;
    const answers = entryRecords(q.qname, q.question.type, addresses, this.o.zone.ttl);
    return { message: reply(Rcode.NOERROR, { aa: true, answers }), cacheable: true, group, tag: SYSTEM_TAG.auth };
  }

  private reverse(q: Query): Answer | Promise<Answer> {
    if (!this.o.isSynced()) return this.notReady('reverse');
    const ip = q.question.type === Type.PTR ? ipFromReverseName(q.qname) : null;
    const all = ip === null ? [] : this.o.zone.reverse(ip);
    const policy = all.length === 0 ? null : (this.o.visibility?.() ?? null);
    // Under a policy, only the names the asker may see (none: as an address of no Service), for it alone.
    const asker = policy === null ? undefined : this.askerNamespace(q);
    const targets = policy === null ? all : all.filter((target) => !this.hidden(policy, asker, target));
    if (targets.length > 0) {
      const ttl = this.o.zone.ttl;
      const answers: ResourceRecord[] = targets.map((target) => ({ name: q.qname, type: Type.PTR, class: Class.IN, ttl, data: { target } }));
      if (policy !== null) return { message: reply(Rcode.NOERROR, { answers }), clientScope: 32, tag: SYSTEM_TAG.reverse };
      // Grouped by the address: a change to any service that publishes it, before or after, drops it.
      return { message: reply(Rcode.NOERROR, { answers }), cacheable: true, group: ip!, tag: SYSTEM_TAG.reverse };
    }
    // Not a cluster address: the rest of the reverse tree belongs to the upstreams (as the original
    // did); a cluster address hidden from this asker is asked there too, its answer this asker's alone.
    return policy === null ? this.forward(q, 'reverse') : this.forward(q, 'reverse').then(scoped);
  }

  /** The query's OPT as it goes upstream: without the Client Subnet when one of our caches put it there (a pod's address stays in the cluster). */
  private ednsUpstream(q: Query): Edns | null {
    const edns = q.message.edns;
    if (edns === null || q.clientSubnet === null || !this.trusts(q.remoteAddress)) return edns;
    return { ...edns, options: edns.options.filter((o) => o.code !== OPTION_ECS) };
  }

  private async forward(q: Query, system: System): Promise<Answer> {
    const tag = SYSTEM_TAG[system];
    const request = { ...q.message, questions: [q.question], answers: [], authorities: [], additionals: [], edns: this.ednsUpstream(q) };
    const key = this.stale === null ? '' : questionKey(q.qname, q.question.type, q.question.class, q.message.edns?.do === true, q.message.cd);
    const query = encodeMessage(request).bytes;
    // A prefetch asks upstream whatever serve_stale keeps.
    const early = this.stale?.immediate === true && !q.prefetch ? this.stale.early(key) : null;
    if (early !== null) {
      // serve_stale immediate: an expired reply at once, refreshed behind it.
      if (early.refresh) this.stale!.refresh(key, () => this.o.forwarder.forward(query, q.qname).then((wire) => this.kept(wire, key, q.qname)));
      return early.ttl > 0 ? { wire: early.wire, cacheable: true, ttl: early.ttl, tag } : { wire: early.wire, cacheable: false, tag };
    }
    try {
      const wire = await this.o.forwarder.forward(query, q.qname);
      const ttl = this.kept(wire, key, q.qname);
      return ttl > 0 ? { wire, cacheable: true, ttl, tag, prefetch: this.forwardCache?.prefetch } : { wire, cacheable: false, tag };
    } catch (err) {
      const stale = this.stale?.answer(key) ?? null;
      this.o.log.debug(1, stale === null ? 'forwarding failed' : 'forwarding failed, answered stale', { name: q.qname, err });
      if (stale !== null) return { wire: stale, cacheable: false, tag };
      // The original wrote nothing here and left clients to time out; SERVFAIL lets them move on at once.
      return { message: reply(Rcode.SERVFAIL), cacheable: false, tag };
    }
  }
}

/** A ServiceEntry's addresses of the asked family as records of `name`. */
function entryRecords(name: string, type: number, addresses: readonly string[], ttl: number): ResourceRecord[] {
  const answers: ResourceRecord[] = [];
  for (const address of addresses) {
    const v6 = address.includes(':');
    if ((type === Type.A || type === Type.ANY) && !v6) answers.push({ name, type: Type.A, class: Class.IN, ttl, data: { address } });
    if ((type === Type.AAAA || type === Type.ANY) && v6) answers.push({ name, type: Type.AAAA, class: Class.IN, ttl, data: { address } });
  }
  return answers;
}

function randomId(): number {
  return crypto.getRandomValues(new Uint16Array(1))[0];
}
