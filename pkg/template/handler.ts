// CoreDNS's template plugin as a chained handler: for a name in the templates' zones, each template
// in order: one whose zone, class and type do not apply is passed over; one whose regexes all miss
// the name answers SERVFAIL unless it falls through; one that matches answers, authoritative, with
// its records made from the question (a CNAME answer to an A or AAAA question followed through what
// comes after, as CoreDNS's upstream does). A record that does not read is SERVFAIL.

import { inZone } from '../dns/names.ts';
import { messageOf } from '../dns/chain.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import { encodeMessage } from '../dns/codec.ts';
import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Message, ResourceRecord } from '../dns/message.ts';
import { rrFromText } from '../dns/rr-text.ts';
import { queryOf } from '../dns/server.ts';
import type { Answer, Handler, Query } from '../dns/server.ts';
import { classText, typeText } from '../querylog/names.ts';
import { renderTemplate } from './go-template.ts';
import type { CompiledTemplate, TemplateData } from './go-template.ts';
import type { TemplateRule } from './rules.ts';

const fqdn = (name: string) => (name === '' ? '.' : `${name}.`);

const SERVFAIL: Answer = { message: { ...emptyMessage(), qr: true, ra: true, rcode: Rcode.SERVFAIL } };

type Outcome = TemplateData | 'pass' | 'fail';

function matchRule(t: TemplateRule, q: Query): Outcome {
  // Longest first (templateHandler sorts them once): the first that holds the name is its zone.
  const zone = t.zones.find((z) => inZone(z, q.qname));
  if (zone === undefined) return 'pass';
  const { class: qclass, type: qtype } = q.question;
  if (t.qclass !== Class.ANY && qclass !== Class.ANY && qclass !== t.qclass) return 'pass';
  if (t.qtype !== Type.ANY && qtype !== Type.ANY && qtype !== t.qtype) return 'pass';
  const name = fqdn(q.qname);
  for (const re of t.regex) {
    const m = re.exec(name);
    if (m === null) continue;
    const group: Record<string, string> = {};
    m.forEach((v, i) => (group[String(i)] = v ?? ''));
    for (const [k, v] of Object.entries(m.groups ?? {})) group[k] = v ?? '';
    return {
      name,
      zone: fqdn(zone),
      class: classText(qclass !== Class.ANY ? qclass : t.qclass),
      type: typeText(qtype !== Type.ANY ? qtype : t.qtype),
      remote: q.remoteAddress.replace(/^::ffff:(?=\d+\.)/, ''),
      match: [...m].map((v) => v ?? ''),
      group,
    };
  }
  return t.fallthrough !== null && t.fallthrough.some((z) => inZone(z, q.qname)) ? 'pass' : 'fail';
}

const records = (ts: readonly CompiledTemplate[], d: TemplateData): ResourceRecord[] => ts.map((t) => rrFromText(renderTemplate(t, d)));

/** An A/AAAA question answered with a CNAME: the target's records from what comes after. */
async function followed(message: Message, q: Query, next: Handler): Promise<Answer> {
  const cname = message.answers.find((rr) => rr.type === Type.CNAME);
  if (cname !== undefined) {
    const asked = { ...q.message, questions: [{ name: (cname.data as { target: string }).target, type: q.question.type, class: Class.IN }] };
    const up = await next(queryOf(asked, encodeMessage(asked).bytes, q.transport, q.remoteAddress, q.remotePort, q.clientSubnet, q.prefetch));
    const m = messageOf(up);
    if (m !== undefined) {
      message.answers.push(...m.answers);
      message.tc = m.tc;
    }
  }
  return { message, cacheable: false };
}

/** A template answered (CoreDNS's coredns_template_matches_total): its zone that holds the name (with its dot), the class and the type, as CoreDNS labels them. */
export type TemplateMatched = (zone: string, qclass: string, qtype: string) => void;

export function templateHandler(templates: readonly TemplateRule[], matched?: TemplateMatched): ChainedHandler {
  const rules = templates.map((r) => ({ ...r, zones: [...r.zones].sort((a, b) => b.length - a.length) }));
  const zones = rules.flatMap((r) => r.zones);
  return (q, next) => {
    if (!zones.some((z) => inZone(z, q.qname))) return next(q);
    for (const t of rules) {
      const d = matchRule(t, q);
      if (d === 'pass') continue;
      if (d !== 'fail') matched?.(d.zone, d.class, d.type);
      if (d === 'fail' || t.rcode === Rcode.SERVFAIL) return SERVFAIL;
      let message: Message;
      try {
        message = { ...emptyMessage(), qr: true, aa: true, ra: true, rcode: t.rcode, answers: records(t.answer, d), additionals: records(t.additional, d), authorities: records(t.authority, d) };
      } catch {
        return SERVFAIL;
      }
      const qtype = q.question.type;
      if ((qtype === Type.A || qtype === Type.AAAA) && message.answers.some((rr) => rr.type === Type.CNAME)) return followed(message, q, next);
      return { message, cacheable: false };
    }
    return next(q);
  };
}
