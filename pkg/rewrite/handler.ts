// CoreDNS's rewrite as a chained handler: the rules tried in order on the question's name; the first
// that matches in `stop` mode (or the last of a `continue` run) gives the name the next plugins are
// asked; their reply comes back with the asked question (the server echoes it) and its names rewritten
// as the rules say, last rule first. A name a rule makes invalid is SERVFAIL, as CoreDNS answers.

import { messageOf } from '../dns/chain.ts';
import type { ChainedHandler } from '../dns/chain.ts';
import { encodeMessage } from '../dns/codec.ts';
import { Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { ResourceRecord } from '../dns/message.ts';
import { queryOf } from '../dns/server.ts';
import type { Answer, Query } from '../dns/server.ts';
import { applyRule, isDomainName } from './rules.ts';
import type { AnswerRewrite, NameRule } from './rules.ts';

const fqdn = (name: string) => (name === '' ? '.' : `${name}.`);
const unqualified = (name: string) => (name === '.' ? '' : name.replace(/\.$/, ''));

/** Types whose data names another name (`answer value` rewrites it). */
const NAMING = new Set<number>([Type.CNAME, Type.PTR, Type.NS, Type.SRV, Type.MX, Type.SOA]);

/** `name` through `rewrites`, last first. */
function through(rewrites: readonly AnswerRewrite[], kind: AnswerRewrite['kind'], name: string): string {
  let s = fqdn(name);
  for (let i = rewrites.length - 1; i >= 0; i--) if (rewrites[i].kind === kind) s = rewrites[i].rewrite(s);
  return unqualified(s);
}

function rewriteRecord(rr: ResourceRecord, rewrites: readonly AnswerRewrite[]): ResourceRecord {
  const name = through(rewrites, 'name', rr.name);
  if (!NAMING.has(rr.type)) return name === rr.name ? rr : { ...rr, name };
  const data = rr.data as { target?: string; exchange?: string; mname?: string };
  const field = rr.type === Type.MX ? 'exchange' : rr.type === Type.SOA ? 'mname' : 'target';
  const value = through(rewrites, 'value', data[field]!);
  return { ...rr, name, data: { ...rr.data, [field]: value } as ResourceRecord['data'] };
}

/** The reply with its names rewritten back; a relayed one decoded first. */
function rewriteBack(a: Answer | null, rewrites: readonly AnswerRewrite[]): Answer | null {
  if (a === null) return null;
  const m = messageOf(a);
  if (m === undefined) return a;
  const map = (rrs: ResourceRecord[]) => (rewrites.length === 0 ? rrs : rrs.map((rr) => rewriteRecord(rr, rewrites)));
  // Not `below`: that answer stands for the new name's zone, not for the names the asker's shares.
  return { ...a, wire: undefined, below: undefined, message: { ...m, answers: map(m.answers), authorities: map(m.authorities), additionals: map(m.additionals) } };
}

/** The query asked again with another name (its bytes made anew, for a forwarder to relay). */
function renamed(q: Query, name: string): Query {
  const message = { ...q.message, questions: [{ ...q.question, name: unqualified(name) }] };
  return queryOf(message, encodeMessage(message).bytes, q.transport, q.remoteAddress, q.remotePort, q.clientSubnet, q.prefetch);
}

const SERVFAIL: Answer = { message: { ...emptyMessage(), qr: true, ra: true, rcode: Rcode.SERVFAIL } };

export function rewriteHandler(rules: readonly NameRule[]): ChainedHandler {
  return (q, next) => {
    let name = fqdn(q.qname);
    let rewrites: AnswerRewrite[] | null = null;
    for (const rule of rules) {
      const done = applyRule(rule, name);
      if (done === null) continue;
      if (!isDomainName(done.name)) return SERVFAIL;
      name = done.name;
      rewrites = rewrites === null ? done.answers : [...rewrites, ...done.answers];
      if (rule.mode === 'stop') break;
    }
    if (rewrites === null) return next(q);
    const answer = next(renamed(q, name));
    const back = rewrites;
    return answer instanceof Promise ? answer.then((a) => rewriteBack(a, back)) : rewriteBack(answer, back);
  };
}
