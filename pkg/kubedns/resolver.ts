// The kube-dns handler: decides, for each question the answer cache could not serve, whether it is
// ours (cluster zone, reverse map, CHAOS), refused, or forwarded upstream, and builds the answer.

import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Message, ResourceRecord } from '../dns/message.ts';
import { encodeMessage, parseMessage } from '../dns/codec.ts';
import type { Answer, Query } from '../dns/server.ts';
import { ipFromReverseName } from '../cluster/ip.ts';
import type { Zone } from '../zone/zone.ts';
import type { Forwarder } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';

/** Where an answer came from, as the original's SkyDNS metrics label it. */
export type System = 'auth' | 'reverse' | 'recursive' | 'chaos' | 'refused';

export interface ResolverOptions {
  zone: Zone;
  forwarder: Forwarder;
  isSynced: () => boolean;
  /** CHAOS version.bind answer. */
  version: string;
  /** CHAOS hostname.bind answer. */
  hostname: string;
  log: Logger;
  /** Called once per answered miss, for the per-system request metrics. */
  onSystem?: (system: System) => void;
}

const REVERSE_SUFFIXES = ['.in-addr.arpa', '.ip6.arpa'];

function isReverse(qname: string): boolean {
  return REVERSE_SUFFIXES.some((s) => qname.endsWith(s));
}

function reply(rcode: number, opts: Partial<Message> = {}): Message {
  return { ...emptyMessage(), qr: true, ra: true, rcode, ...opts };
}

export class Resolver {
  private readonly o: ResolverOptions;

  constructor(opts: ResolverOptions) {
    this.o = opts;
  }

  readonly handle = (q: Query): Answer | Promise<Answer> => {
    const { type, class: qclass } = q.question;
    if (qclass === Class.CH) return this.chaos(q);
    if (qclass !== Class.IN && qclass !== Class.ANY) return this.refuse();
    if (type === Type.AXFR || type === Type.IXFR) return this.refuse();
    if (this.o.zone.contains(q.qname)) return this.cluster(q);
    if (isReverse(q.qname)) return this.reverse(q);
    return this.forward(q, 'recursive');
  };

  private count(system: System): void {
    this.o.onSystem?.(system);
  }

  private refuse(): Answer {
    this.count('refused');
    return { message: reply(Rcode.REFUSED), cacheable: true };
  }

  private chaos(q: Query): Answer {
    const answer = chaosText(q.qname, this.o);
    if (answer === null || (q.question.type !== Type.TXT && q.question.type !== Type.ANY)) return this.refuse();
    this.count('chaos');
    const rr: ResourceRecord = { name: q.qname, type: Type.TXT, class: Class.CH, ttl: 0, data: { texts: [answer] } };
    return { message: reply(Rcode.NOERROR, { aa: true, answers: [rr] }), cacheable: true };
  }

  /** Until the first sync an empty store must not turn into NXDOMAIN: the client retries elsewhere. */
  private notReady(): Answer {
    return { message: reply(Rcode.SERVFAIL), cacheable: false };
  }

  private cluster(q: Query): Answer | Promise<Answer> {
    if (!this.o.isSynced()) return this.notReady();
    const r = this.o.zone.lookup(q.qname, q.question.type);
    this.count('auth');
    const message = reply(r.rcode, { aa: r.aa, answers: r.answers, authorities: r.authorities, additionals: r.additionals });
    if (r.chase === null) return { message, cacheable: true };
    return this.chase(message, r.chase, q.question.type);
  }

  /** ExternalName: resolve the CNAME target upstream (stub domains honoured) and append what comes back. */
  private async chase(message: Message, target: string, qtype: number): Promise<Answer> {
    const query = emptyMessage(randomId());
    query.rd = true;
    query.questions.push({ name: target, type: qtype, class: Class.IN });
    try {
      const wire = await this.o.forwarder.forward(encodeMessage(query).bytes, target);
      const upstream = parseMessage(wire);
      message.answers.push(...upstream.answers);
      if (upstream.rcode === Rcode.NXDOMAIN) message.rcode = Rcode.NXDOMAIN;
    } catch (err) {
      // The CNAME alone still lets the client resolve the target itself.
      this.o.log.debug(1, 'ExternalName target not resolved upstream', { target, error: err });
    }
    return { message, cacheable: false };
  }

  private reverse(q: Query): Answer | Promise<Answer> {
    if (!this.o.isSynced()) return this.notReady();
    if (q.question.type === Type.PTR) {
      const ip = ipFromReverseName(q.qname);
      const targets = ip === null ? [] : this.o.zone.reverse(ip);
      if (targets.length > 0) {
        this.count('reverse');
        const ttl = this.o.zone.ttl;
        const answers: ResourceRecord[] = targets.map((target) => ({ name: q.qname, type: Type.PTR, class: Class.IN, ttl, data: { target } }));
        return { message: reply(Rcode.NOERROR, { answers }), cacheable: true };
      }
    }
    // Not a cluster address: the rest of the reverse tree belongs to the upstreams (as the original did).
    return this.forward(q, 'reverse');
  }

  private async forward(q: Query, system: System): Promise<Answer> {
    this.count(system);
    const request = { ...q.message, questions: [q.question], answers: [], authorities: [], additionals: [] };
    try {
      const wire = await this.o.forwarder.forward(encodeMessage(request).bytes, q.qname);
      return { wire, cacheable: false };
    } catch (err) {
      // The original wrote nothing here and left clients to time out; SERVFAIL lets them move on at once.
      this.o.log.debug(1, 'forwarding failed', { name: q.qname, error: err });
      return { message: reply(Rcode.SERVFAIL), cacheable: false };
    }
  }
}

function chaosText(qname: string, o: ResolverOptions): string | null {
  switch (qname) {
    case 'version.bind':
    case 'version.server':
      return o.version;
    case 'hostname.bind':
    case 'id.server':
      return o.hostname;
    default:
      return null;
  }
}

function randomId(): number {
  return crypto.getRandomValues(new Uint16Array(1))[0];
}
