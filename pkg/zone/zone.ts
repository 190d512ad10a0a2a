// The cluster zone: the tree cache of names, the reverse (PTR) map and the cluster-IP map, fed one
// service at a time. One writer (the store's flush); lookups run between writes, so they always see
// a consistent state.

import { Class, Rcode, Type } from '../dns/constants.ts';
import type { ResourceRecord, SoaData } from '../dns/message.ts';
import type { EndpointSetInfo, ServiceInfo } from '../cluster/model.ts';
import { buildServiceRecords } from './records.ts';
import { TreeNode, findNode, insertRecord, removeOwner } from './tree.ts';
import type { ZoneRecord } from './tree.ts';
import { answerFromNode, podLookup } from './answer.ts';

export type PodRecordsMode = 'insecure' | 'disabled';

export interface ZoneOptions {
  /** Cluster domain without trailing dot, lowercased, e.g. "cluster.local". */
  domain: string;
  ttl: number;
  podRecords: PodRecordsMode;
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
}

export const DNS_VERSION = '1.1.0';
/** TTL of the dns-version TXT record, as the spec's example shows. */
const DNS_VERSION_TTL = 28800;
const MAX_CNAME_CHAIN = 8;
const APEX_OWNER = ' apex';

interface Published {
  names: string[][];
  ptrIPs: string[];
  clusterIPs: string[];
}

export class Zone {
  readonly domain: string;
  readonly ttl: number;
  readonly podRecords: PodRecordsMode;
  readonly root = new TreeNode(true);
  /** IP → PTR targets, with the service that published each. */
  readonly reverseMap = new Map<string, { owner: string; target: string }[]>();
  /** ClusterIP → service key. */
  readonly clusterIPMap = new Map<string, string>();
  private readonly published = new Map<string, Published>();
  private readonly suffix: string;
  private readonly now: () => number;
  private soaSerial: number;

  constructor(opts: ZoneOptions) {
    this.domain = opts.domain;
    this.ttl = opts.ttl;
    this.podRecords = opts.podRecords;
    this.suffix = '.' + opts.domain;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.soaSerial = this.now();
    this.root.ensureChild('svc', true);
    if (opts.podRecords === 'insecure') this.root.ensureChild('pod', true);
    this.root.add(APEX_OWNER, { type: Type.NS, data: { target: `ns.dns.${opts.domain}` } });
    // ns.dns.<zone> exists (the NS target) so that asking for it is NODATA, not NXDOMAIN.
    this.root.ensureChild('dns', true).ensureChild('ns', true);
    insertRecord(this.root, ['dns-version'], APEX_OWNER, { type: Type.TXT, data: { texts: [DNS_VERSION] } });
  }

  get serial(): number {
    return this.soaSerial;
  }

  /** Is `qname` (canonical: lowercase, no trailing dot) at or below the zone apex? */
  contains(qname: string): boolean {
    return qname === this.domain || qname.endsWith(this.suffix);
  }

  /** Replaces what each listed service publishes (null: the service is gone). Bumps the SOA serial once. */
  updateServices(changes: Iterable<[key: string, svc: ServiceInfo | null, sets: EndpointSetInfo[]]>): void {
    let changed = false;
    for (const [key, svc, sets] of changes) {
      this.unpublish(key);
      if (svc) this.publish(key, svc, sets);
      changed = true;
    }
    if (changed) this.soaSerial = Math.max(this.now(), this.soaSerial + 1);
  }

  private unpublish(key: string): void {
    const old = this.published.get(key);
    if (!old) return;
    this.published.delete(key);
    for (const labels of old.names) removeOwner(this.root, labels, key);
    for (const ip of old.ptrIPs) {
      const list = this.reverseMap.get(ip)?.filter((p) => p.owner !== key);
      if (list && list.length > 0) this.reverseMap.set(ip, list);
      else this.reverseMap.delete(ip);
    }
    for (const ip of old.clusterIPs) if (this.clusterIPMap.get(ip) === key) this.clusterIPMap.delete(ip);
  }

  private publish(key: string, svc: ServiceInfo, sets: EndpointSetInfo[]): void {
    const { records, ptrs } = buildServiceRecords(svc, sets, this.domain);
    const names = new Map<string, string[]>();
    for (const r of records) {
      insertRecord(this.root, r.labels, key, r.record);
      names.set(r.labels.join('.'), r.labels);
    }
    const ptrIPs: string[] = [];
    for (const p of ptrs) {
      const list = this.reverseMap.get(p.ip);
      if (list) list.push({ owner: key, target: p.target });
      else this.reverseMap.set(p.ip, [{ owner: key, target: p.target }]);
      ptrIPs.push(p.ip);
    }
    for (const ip of svc.clusterIPs) this.clusterIPMap.set(ip, key);
    this.published.set(key, { names: [...names.values()], ptrIPs, clusterIPs: svc.clusterIPs });
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
    const result: LookupResult = { rcode: Rcode.NOERROR, aa: true, answers: [], authorities: [], additionals: [], chase: null };
    let name = qname;
    for (let hop = 0; hop <= MAX_CNAME_CHAIN; hop++) {
      const step = this.lookupOne(name, qtype, result);
      if (step === null) break;
      if (!this.contains(step)) {
        if (qtype === Type.A || qtype === Type.AAAA) result.chase = step;
        break;
      }
      name = step;
    }
    if (result.answers.length === 0 || result.rcode !== Rcode.NOERROR) result.authorities.push(this.soaRecord());
    return result;
  }

  /** Adds what `name` holds for `qtype` to `result`; returns a CNAME target to follow, or null. */
  private lookupOne(name: string, qtype: number, result: LookupResult): string | null {
    const labels = this.relativeLabels(name);
    if (labels.at(-1) === 'pod' && this.podRecords === 'insecure') {
      result.rcode = podLookup(labels, name, qtype, this.ttl, result.answers);
      return null;
    }
    const node = findNode(this.root, labels);
    if (!node) {
      result.rcode = Rcode.NXDOMAIN;
      return null;
    }
    result.rcode = Rcode.NOERROR;
    if (labels.length === 0 && qtype === Type.SOA) {
      result.answers.push(this.soaRecord());
      return null;
    }
    const ttl = labels.length === 1 && labels[0] === 'dns-version' ? DNS_VERSION_TTL : this.ttl;
    const cname = answerFromNode(node, name, qtype, ttl, result.answers);
    if (qtype === Type.SRV) this.addGlue(result);
    return cname;
  }

  /** A/AAAA of in-zone SRV targets go in the additional section. */
  private addGlue(result: LookupResult): void {
    const seen = new Set<string>();
    for (const rr of result.answers) {
      if (rr.type !== Type.SRV) continue;
      const target = (rr.data as { target: string }).target;
      if (seen.has(target) || !this.contains(target)) continue;
      seen.add(target);
      const node = findNode(this.root, this.relativeLabels(target));
      node?.forEach(undefined, (r: ZoneRecord) => {
        if (r.type === Type.A || r.type === Type.AAAA) result.additionals.push({ name: target, type: r.type, class: Class.IN, ttl: this.ttl, data: r.data });
      });
    }
  }

  /** PTR targets for an IP (canonical text), or an empty list. */
  reverse(ip: string): string[] {
    return this.reverseMap.get(ip)?.map((p) => p.target) ?? [];
  }

  counts(): { services: number; ptrs: number; clusterIPs: number } {
    return { services: this.published.size, ptrs: this.reverseMap.size, clusterIPs: this.clusterIPMap.size };
  }
}
