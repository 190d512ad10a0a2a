// Handlers in a row, as a Corefile's plugins run (CoreDNS's ServeDNS with its next): each answers,
// drops (null), or hands the query, as it is or changed, to the next and may change what comes back.
// The last is a plain Handler. Composed once: a query costs no allocation for the chain itself.

import { parseMessage } from './parse.ts';
import type { Message } from './message.ts';
import type { Answer, Handler, Query } from './server.ts';

/** A handler in a chain: answers itself, or calls `next` (with this query or another) and returns what it gives. */
export type ChainedHandler = (q: Query, next: Handler) => Answer | null | Promise<Answer | null>;

/** `first` in order, then `last`. */
export function chain(first: readonly ChainedHandler[], last: Handler): Handler {
  let handler = last;
  for (let i = first.length - 1; i >= 0; i--) {
    const step = first[i];
    const next = handler;
    handler = (q) => step(q, next);
  }
  return handler;
}

/** What came back from `next` as a message, a relayed reply decoded; undefined for none. */
export function messageOf(a: Answer | null): Message | undefined {
  if (a === null) return undefined;
  return a.message ?? (a.wire === undefined ? undefined : parseMessage(a.wire));
}
