// Turns what a tree node holds into answer records for one question type.

import { Class, Rcode, Type } from '../dns/constants.ts';
import type { NameData, ResourceRecord } from '../dns/message.ts';
import { ipFamily, ipFromDashed } from '../cluster/ip.ts';
import type { TreeNode } from './tree.ts';

/** RFC 8482 §4.2: the synthesized answer to ANY when we decline to list everything. */
const RFC8482_HINFO = { cpu: 'RFC8482', os: '' };

/**
 * Appends the records of `qtype` held at `node` (owner `name`) to `answers`. A CNAME answers every
 * other type too; its target is returned so the caller can follow it. ANY gets one RRset (RFC 8482).
 */
export function answerFromNode(node: TreeNode, name: string, qtype: number, ttl: number, answers: ResourceRecord[]): string | null {
  const push = (type: number) => node.forEach(type, (r) => answers.push({ name, type: r.type, class: Class.IN, ttl, data: r.data }));
  if (qtype === Type.ANY) {
    const types = node.types();
    if (types.length > 0) push(types[0]);
    else if (node.children === null) answers.push({ name, type: Type.HINFO, class: Class.IN, ttl, data: RFC8482_HINFO });
    return null;
  }
  if (qtype !== Type.CNAME && node.has(Type.CNAME)) {
    push(Type.CNAME);
    return (answers[answers.length - 1].data as NameData).target;
  }
  push(qtype);
  return null;
}

/**
 * Pod records `<dashed-ip>.<ns>.pod.<zone>` (insecure mode: any parseable IP answers, as kube-dns and
 * CoreDNS `pods insecure` do). `labels` are relative to the zone and end with "pod". Returns the rcode.
 */
export function podLookup(labels: string[], name: string, qtype: number, ttl: number, answers: ResourceRecord[]): number {
  if (labels.length < 3) return Rcode.NOERROR; // pod.<zone> and <ns>.pod.<zone> exist: everything below them does
  if (labels.length > 3) return Rcode.NXDOMAIN;
  const ip = ipFromDashed(labels[0]);
  if (ip === null) return Rcode.NXDOMAIN;
  const type = ipFamily(ip) === 4 ? Type.A : Type.AAAA;
  if (qtype === type || qtype === Type.ANY) answers.push({ name, type, class: Class.IN, ttl, data: { address: ip } });
  return Rcode.NOERROR;
}
