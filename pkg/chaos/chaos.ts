// CoreDNS's `chaos` plugin: TXT questions of class CH for version.bind and version.server (the
// version), authors.bind (the authors, shuffled), hostname.bind and id.server (this host's name),
// TTL 0. Every other question goes on.

import { hostname } from 'node:os';
import type { ChainedHandler } from '../dns/chain.ts';
import { Class, Rcode, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { ResourceRecord } from '../dns/message.ts';
import { VERSION } from '../version/version.ts';

export interface ChaosAnswers {
  version: string;
  authors: readonly string[];
}

/** `chaos` unsaid: this project's version, and its name for the authors. */
export const CHAOS_DEFAULTS: ChaosAnswers = { version: `kube-dns-ts-${VERSION}`, authors: ['kube-dns-ts'] };

/** CoreDNS's cap on a TXT string it makes (one character string holds 255 bytes). */
export const trim255 = (s: string) => (s.length < 256 ? s : s.slice(0, 255));

/** The TXT strings chaos answers for `name` (canonical), or null for a name it does not answer. */
export function chaosTexts(name: string, o: ChaosAnswers): string[] | null {
  switch (name) {
    case 'version.bind':
    case 'version.server':
      return [o.version];
    case 'authors.bind':
      return [...o.authors].sort(() => Math.random() - 0.5);
    case 'hostname.bind':
    case 'id.server':
      return [trim255(hostname())];
    default:
      return null;
  }
}

export function chaosHandler(o: ChaosAnswers): ChainedHandler {
  return (q, next) => {
    if (q.question.class !== Class.CH || q.question.type !== Type.TXT) return next(q);
    const found = chaosTexts(q.qname, o);
    if (found === null) return next(q);
    const answers: ResourceRecord[] = found.map((text) => ({ name: q.question.name, type: Type.TXT, class: Class.CH, ttl: 0, data: { texts: [text] } }));
    return { message: { ...emptyMessage(), qr: true, aa: false, ra: true, rcode: Rcode.NOERROR, answers }, cacheable: false };
  };
}
