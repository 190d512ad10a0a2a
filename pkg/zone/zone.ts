// The cluster zone: the tree cache of names, the reverse (PTR) map and the cluster-IP map, fed one
// service at a time. One writer (the store's flush); lookups run between writes, so they always see
// a consistent state.

import { Class, Rcode, Type } from '../dns/constants.ts';
import type { ResourceRecord, SoaData } from '../dns/message.ts';
import type { EndpointSetInfo, ServiceInfo } from '../cluster/model.ts';
import { buildServiceView, isEmptyView } from './service-view.ts';
import type { ServiceView } from './service-view.ts';
import { TreeNode, ensurePath, removeView, walk } from './tree.ts';
import { answerFromNode, answerFromView, podLookup } from './answer.ts';

export type PodRecordsMode = 'insecure' | 'verified' | 'disabled';

export interface ZoneOptions {
  /** Cluster domain without trailing dot, lowercased, e.g. "cluster.local". */
  domain: string;
  ttl: number;
  podRecords: PodRecordsMode;
  /** The only namespaces whose pod records are answered (CoreDNS's kubernetes `namespaces`); absent: all. */
  namespaces?: ReadonlySet<string>;
  /** `verified`: whether a pod at `ip` lives in `namespace` (CoreDNS's `pods verified`). */
  podAt?: (ip: string, namespace: string) => boolean;
  /** Seconds clock, for the SOA serial. */
  now?: () => number;
}

export interface LookupResult {
  rcode: number;
  aa: boolean;
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
  /** A CNAME target outside the zone still to be resolved for the asked A/AAAA (ExternalName). */
  chase: string | null;
  /**
   * Made up from the name itself rather than held (pod records: any dashed IP answers), so there are
   * as many such names as addresses: worth no cache entry, and cheap to make again.
   */
  synthesized: boolean;
  /**
   * The key of the one service whose records make the answer, or ZONE_WIDE when it draws on several,
   * on none, or on the zone's own SOA (its serial changes with every update).
   */
  owner: string;
}

/** What updateServices reports as touched for every change: the answers that draw on the zone as a whole. */
export const ZONE_WIDE = '';
/** Set while lookup() has met no service yet. */
const NO_OWNER_YET = '\0';

/** A reverse-map entry: the address belongs to the service named `fqdn` (as endpoint `host`, or as the service). */
export interface PtrRef {
  /** `<svc>.<ns>.svc.<zone>`: one service's. */
  fqdn: string;
  host: string | null;
}

/** The names at one address: an endpoint host, null (the service itself), or several. */
type Names = string | null | (string | null)[];
/** What a view publishes in the reverse map: address → its names. */
type Ptrs = Map<string, Names>;

export const DNS_VERSION = '1.1.0';
/** TTL of the dns-version TXT record, as the spec's example shows. */
const DNS_VERSION_TTL = 28800;
const MAX_CNAME_CHAIN = 8;

export class Zone {
  readonly domain: string;
  readonly ttl: number;
  readonly podRecords: PodRecordsMode;
  readonly root = new TreeNode(true);
  /** IP → the services (and endpoint names) it belongs to. */
  readonly reverseMap = new Map<string, PtrRef[]>();
  /** ClusterIP → service key. */
  readonly clusterIPMap = new Map<string, string>();
  private readonly views = new Map<string, ServiceView>();
  private readonly podAt: ((ip: string, namespace: string) => boolean) | null;
  private readonly podNamespaces: ReadonlySet<string> | null;
  private readonly suffix: string;
  private readonly now: () => number;
  private soaSerial: number;

  constructor(opts: ZoneOptions) {
    this.domain = opts.domain;
    this.ttl = opts.ttl;
    this.podRecords = opts.podRecords;
    const podAt = opts.podRecords === 'verified' ? (opts.podAt ?? (() => false)) : null;
    const exposed = opts.namespaces;
    // A pod of a namespace not exposed does not exist.
    this.podAt = exposed === undefined ? podAt : (ip, ns) => exposed.has(ns) && (podAt === null || podAt(ip, ns));
    this.podNamespaces = exposed ?? null;
    this.suffix = '.' + opts.domain;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.soaSerial = this.now();
    this.root.ensureChild('svc', true);
    if (opts.podRecords !== 'disabled') this.root.ensureChild('pod', true);
    this.root.records = [{ type: Type.NS, data: { target: `ns.dns.${opts.domain}` } }];
    // ns.dns.<zone> exists (the NS target) so that asking for it is NODATA, not NXDOMAIN.
    this.root.ensureChild('dns', true).ensureChild('ns', true);
    this.root.ensureChild('dns-version', true).records = [{ type: Type.TXT, data: { texts: [DNS_VERSION] } }];
  }

  get serial(): number {
    return this.soaSerial;
  }

  /** Is `qname` (canonical: lowercase, no trailing dot) at or below the zone apex? */
  contains(qname: string): boolean {
    return qname === this.domain || qname.endsWith(this.suffix);
  }

  /**
   * Replaces what each listed service publishes (null: the service is gone). Bumps the SOA serial
   * once. Returns what the change touched, as the answers name it (LookupResult.owner, the address
   * of a PTR): the services' keys, every address they published before or after, and ZONE_WIDE;
   * nothing when nothing was listed.
   */
  updateServices(changes: Iterable<[key: string, svc: ServiceInfo | null, sets: EndpointSetInfo[]]>): string[] {
    const touched = [ZONE_WIDE];
    for (const [key, svc, sets] of changes) {
      touched.push(key);
      const view = svc ? buildServiceView(key, svc, sets, this.domain) : null;
      this.replace(key, view === null || isEmptyView(view) ? null : view, touched);
    }
    if (touched.length === 1) return [];
    this.soaSerial = Math.max(this.now(), this.soaSerial + 1);
    return touched;
  }

  private static labelsOf(key: string): string[] {
    const [ns, name] = key.split('/');
    return [name, ns, 'svc'];
  }

  /**
   * Puts `next` (null: nothing) in place of what `key` published. Only the addresses whose names
   * differ are rewritten in the reverse and cluster-IP maps, and touched: one endpoint turning ready
   * in a Service of 10,000 touches its own address, not 20,000.
   */
  private replace(key: string, next: ServiceView | null, touched: string[]): void {
    const old = this.views.get(key);
    if (old === undefined && next === null) return;
    if (next === null) {
      this.views.delete(key);
      removeView(this.root, Zone.labelsOf(key));
      // Gone: every address it published (a headless view's addresses are all its hosts' addresses).
      for (const ip of old!.addresses) this.repoint(ip, old!, undefined, touched);
      return;
    }
    this.views.set(key, next);
    ensurePath(this.root, Zone.labelsOf(key)).view = next;
    if (old === undefined) {
      // New (the whole first sync): nothing to compare with.
      forEachPtr(next, (ip, host) => this.addPtr(ip, next, host, touched));
      return;
    }
    const before = ptrsOf(old);
    const after = ptrsOf(next);
    for (const ip of before.keys()) if (!after.has(ip)) this.repoint(ip, old, undefined, touched);
    for (const [ip, hosts] of after) if (!sameHosts(hosts, before.get(ip))) this.repoint(ip, next, hosts, touched);
  }

  /** Replaces the reverse entries of `service` at `ip` with `hosts` (undefined: none); touches `ip`. */
  private repoint(ip: string, service: ServiceView, hosts: Names | undefined, touched: string[]): void {
    const kept = this.reverseMap.get(ip)?.filter((p) => p.fqdn !== service.fqdn);
    if (kept !== undefined && kept.length > 0) this.reverseMap.set(ip, kept);
    else this.reverseMap.delete(ip);
    if (this.clusterIPMap.get(ip) === service.key) this.clusterIPMap.delete(ip);
    touched.push(ip);
    if (hosts === undefined) return;
    if (Array.isArray(hosts)) for (const host of hosts) this.addPtr(ip, service, host, null);
    else this.addPtr(ip, service, hosts, null);
  }

  /** Adds one reverse entry of `service` at `ip` (its own address when `host` is null: a cluster IP). */
  private addPtr(ip: string, service: ServiceView, host: string | null, touched: string[] | null): void {
    touched?.push(ip);
    const ref: PtrRef = { fqdn: service.fqdn, host };
    const list = this.reverseMap.get(ip);
    if (list) list.push(ref);
    else this.reverseMap.set(ip, [ref]);
    if (host === null) this.clusterIPMap.set(ip, service.key);
  }

  soaRecord(): ResourceRecord {
    const data: SoaData = {
      mname: `ns.dns.${this.domain}`,
      rname: `hostmaster.${this.domain}`,
      serial: this.soaSerial,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: this.ttl,
    };
    return { name: this.domain, type: Type.SOA, class: Class.IN, ttl: this.ttl, data };
  }

  /** Relative labels of an in-zone name, in query order ([] for the apex). */
  private relativeLabels(qname: string): string[] {
    return qname === this.domain ? [] : qname.slice(0, -this.suffix.length).split('.');
  }

  /** Answers a question for a name inside the zone (see `contains`). */
  lookup(qname: string, qtype: number): LookupResult {
    const result: LookupResult = { rcode: Rcode.NOERROR, aa: true, answers: [], authorities: [], additionals: [], chase: null, synthesized: false, owner: NO_OWNER_YET };
    let name = qname;
    for (let hop = 0; hop <= MAX_CNAME_CHAIN; hop++) {
      const next = this.lookupOne(name, qtype, result);
      if (next === null) break;
      if (!this.contains(next)) {
        if (qtype === Type.A || qtype === Type.AAAA) result.chase = next;
        break;
      }
      name = next;
    }
    if (qtype === Type.SRV) this.addGlue(result);
    if (result.answers.length === 0 || result.rcode !== Rcode.NOERROR) {
      result.authorities.push(this.soaRecord());
      result.owner = ZONE_WIDE;
    }
    if (result.owner === NO_OWNER_YET) result.owner = ZONE_WIDE;
    return result;
  }

  /** Adds what `name` holds for `qtype` to `result`; returns a CNAME target to follow, or null. */
  private lookupOne(name: string, qtype: number, result: LookupResult): string | null {
    const labels = this.relativeLabels(name);
    if (labels.at(-1) === 'pod' && this.podRecords !== 'disabled') {
      result.rcode = labels.length === 2 && this.podNamespaces !== null && !this.podNamespaces.has(labels[0]) ? Rcode.NXDOMAIN : podLookup(labels, name, qtype, this.ttl, result.answers, this.podAt);
      result.synthesized = true;
      return null;
    }
    const { node, rest } = walk(this.root, labels);
    if (node.view) {
      owns(result, node.view.key);
      const step = answerFromView(node.view, labels.slice(0, rest), name, qtype, this.ttl, result.answers);
      result.rcode = step.rcode;
      return step.cname;
    }
    result.owner = ZONE_WIDE;
    if (rest > 0) {
      result.rcode = Rcode.NXDOMAIN;
      return null;
    }
    result.rcode = Rcode.NOERROR;
    if (labels.length === 0 && (qtype === Type.SOA || qtype === Type.ANY)) result.answers.push(this.soaRecord());
    else answerFromNode(node, name, qtype, node === this.root.child('dns-version') ? DNS_VERSION_TTL : this.ttl, result.answers);
    return null;
  }

  /** A/AAAA of in-zone SRV targets go in the additional section. */
  private addGlue(result: LookupResult): void {
    const seen = new Set<string>();
    for (const rr of result.answers) {
      if (rr.type !== Type.SRV) continue;
      const target = (rr.data as { target: string }).target;
      if (seen.has(target) || !this.contains(target)) continue;
      seen.add(target);
      const labels = this.relativeLabels(target);
      const { node, rest } = walk(this.root, labels);
      if (!node.view) continue;
      owns(result, node.view.key);
      for (const type of [Type.A, Type.AAAA]) answerFromView(node.view, labels.slice(0, rest), target, type, this.ttl, result.additionals);
    }
  }

  /** PTR targets for an IP (canonical text), or an empty list. */
  reverse(ip: string): string[] {
    return this.reverseMap.get(ip)?.map((p) => (p.host === null ? p.fqdn : `${p.host}.${p.fqdn}`)) ?? [];
  }


  /** Does the service `key` (`ns/name`) publish any record? (A headless one without published endpoints does not.) */
  publishes(key: string): boolean {
    return this.views.has(key);
  }

  counts(): { services: number; ptrs: number; clusterIPs: number } {
    return { services: this.views.size, ptrs: this.reverseMap.size, clusterIPs: this.clusterIPMap.size };
  }
}

/** Each reverse entry a view makes: its endpoints' addresses and names (headless), or its cluster IPs (host null). */
function forEachPtr(view: ServiceView, each: (ip: string, host: string | null) => void): void {
  if (view.hosts === null) for (const ip of view.addresses) each(ip, null);
  else for (const host of view.hosts) for (const ip of host.ips) each(ip, host.name);
}

/** A view's reverse entries by address: one name (most addresses have one) or a list. */
function ptrsOf(view: ServiceView): Ptrs {
  const ptrs: Ptrs = new Map();
  forEachPtr(view, (ip, host) => {
    const names = ptrs.get(ip);
    if (names === undefined) ptrs.set(ip, host);
    else if (Array.isArray(names)) names.push(host);
    else ptrs.set(ip, [names, host]);
  });
  return ptrs;
}

/** The same names at an address, before and after (undefined: it had none). */
function sameHosts(a: Names, b: Names | undefined): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return a === b;
  return a.length === b.length && a.every((h, i) => h === b[i]);
}

/** The answer draws on service `key`: its owner while it is the only one. */
function owns(result: LookupResult, key: string): void {
  result.owner = result.owner === NO_OWNER_YET || result.owner === key ? key : ZONE_WIDE;
}
