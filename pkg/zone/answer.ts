// Turns what a service view or a node holds into answer records for one question type.

import { Class, Rcode, Type } from '../dns/constants.ts';
import type { ResourceRecord } from '../dns/message.ts';
import { ipFamily, ipFromDashed } from '../cluster/ip.ts';
import { findHost } from './service-view.ts';
import type { ServiceView, SrvSet } from './service-view.ts';
import type { TreeNode } from './tree.ts';

/** The original's SRV priority; the weights of the records sharing a name add up to 100. */
const SRV_PRIORITY = 10;
/** RFC 8482 §4.2: the synthesized answer to ANY when there is nothing better to give. */
const RFC8482_HINFO = { cpu: 'RFC8482', os: '' };

/** Where an answer stands: the rcode, and a CNAME target to follow (or null). */
export interface Step {
  rcode: number;
  cname: string | null;
}

const NXDOMAIN: Step = { rcode: Rcode.NXDOMAIN, cname: null };
const NOERROR: Step = { rcode: Rcode.NOERROR, cname: null };

function addresses(ips: readonly string[], name: string, qtype: number, ttl: number, out: ResourceRecord[]): void {
  for (const ip of ips) {
    const type = ipFamily(ip) === 4 ? Type.A : Type.AAAA;
    if (type === qtype) out.push({ name, type, class: Class.IN, ttl, data: { address: ip } });
  }
}

function srvRecords(sets: readonly SrvSet[], view: ServiceView, name: string, ttl: number, out: ResourceRecord[]): void {
  let count = 0;
  for (const s of sets) count += s.hosts?.length ?? 1;
  const weight = Math.max(1, Math.floor(100 / Math.max(1, count)));
  for (const s of sets) {
    const targets = s.hosts === null ? [view.fqdn] : s.hosts.map((h) => `${h}.${view.fqdn}`);
    for (const target of targets) out.push({ name, type: Type.SRV, class: Class.IN, ttl, data: { priority: SRV_PRIORITY, weight, port: s.port, target } });
  }
}

/** ANY (RFC 8482): one RRset, the first of A, AAAA, SRV present, else HINFO "RFC8482". */
function anyAnswer(ips: readonly string[], sets: readonly SrvSet[], view: ServiceView, name: string, ttl: number, out: ResourceRecord[]): void {
  for (const type of [Type.A, Type.AAAA]) {
    addresses(ips, name, type, ttl, out);
    if (out.length > 0) return;
  }
  if (sets.length > 0) srvRecords(sets, view, name, ttl, out);
  else out.push({ name, type: Type.HINFO, class: Class.IN, ttl, data: RFC8482_HINFO });
}

/** The service name itself. */
function atService(view: ServiceView, name: string, qtype: number, ttl: number, out: ResourceRecord[]): Step {
  if (view.cname !== null) {
    out.push({ name, type: Type.CNAME, class: Class.IN, ttl, data: { target: view.cname } });
    // A CNAME answers every type; only the others need its target followed.
    return { rcode: Rcode.NOERROR, cname: qtype === Type.CNAME || qtype === Type.ANY ? null : view.cname };
  }
  if (qtype === Type.ANY) anyAnswer(view.addresses, view.srv, view, name, ttl, out);
  else if (qtype === Type.SRV) srvRecords(view.srv, view, name, ttl, out);
  else addresses(view.addresses, name, qtype, ttl, out);
  return NOERROR;
}

/**
 * Answers for `name`, which is the service name (`rest` empty) or below it (`rest`: the labels
 * under the service, in query order).
 */
export function answerFromView(view: ServiceView, rest: readonly string[], name: string, qtype: number, ttl: number, out: ResourceRecord[]): Step {
  if (rest.length === 0) return atService(view, name, qtype, ttl, out);
  if (view.cname !== null || rest.length > 2) return NXDOMAIN;
  if (rest.length === 1) {
    const ips = findHost(view, rest[0])?.ips;
    if (ips) {
      if (qtype === Type.ANY) anyAnswer(ips, [], view, name, ttl, out);
      else addresses(ips, name, qtype, ttl, out);
      return NOERROR;
    }
    // `_tcp.<svc>...` is an empty non-terminal when some `_<port>._tcp` exists below it.
    return view.srv.some((s) => s.protoLabel === rest[0]) ? NOERROR : NXDOMAIN;
  }
  const sets = view.srv.filter((s) => s.portLabel === rest[0] && s.protoLabel === rest[1]);
  if (sets.length === 0) return NXDOMAIN;
  if (qtype === Type.SRV || qtype === Type.ANY) srvRecords(sets, view, name, ttl, out);
  return NOERROR;
}

/** Records a node holds itself (apex NS, dns-version TXT). */
export function answerFromNode(node: TreeNode, name: string, qtype: number, ttl: number, out: ResourceRecord[]): void {
  if (!node.records) return;
  const type = qtype === Type.ANY ? node.records[0].type : qtype;
  for (const r of node.records) if (r.type === type) out.push({ name, type: r.type, class: Class.IN, ttl, data: r.data });
}

/**
 * Pod records `<dashed-ip>.<ns>.pod.<zone>` (insecure mode: any parseable IP answers, as kube-dns and
 * CoreDNS `pods insecure` do; verified mode, `podAt` given: only a pod's address in its namespace, as
 * CoreDNS `pods verified`). `labels` are relative to the zone and end with "pod". Returns the rcode.
 */
export function podLookup(labels: readonly string[], name: string, qtype: number, ttl: number, out: ResourceRecord[], podAt: ((ip: string, namespace: string) => boolean) | null = null): number {
  if (labels.length < 3) return Rcode.NOERROR; // pod.<zone> and <ns>.pod.<zone> exist: everything below them does
  if (labels.length > 3) return Rcode.NXDOMAIN;
  const ip = ipFromDashed(labels[0]);
  if (ip === null || (podAt !== null && !podAt(ip, labels[1]))) return Rcode.NXDOMAIN;
  const type = ipFamily(ip) === 4 ? Type.A : Type.AAAA;
  if (qtype === type || qtype === Type.ANY) out.push({ name, type, class: Class.IN, ttl, data: { address: ip } });
  return Rcode.NOERROR;
}
