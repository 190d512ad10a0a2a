// Handlers in a row, as a Corefile's plugins run: each answers, drops (null), or lets the next one
// answer (undefined); the last is a plain Handler.

import type { Answer, Handler, Query } from './server.ts';

/** A handler in a chain: an answer, null to drop the query, undefined to let the next one answer. */
export type ChainedHandler = (q: Query) => Answer | null | undefined;

/** `first` in order, then `last`. */
export function chain(first: readonly ChainedHandler[], last: Handler): Handler {
  if (first.length === 0) return last;
  return (q) => {
    for (const h of first) {
      const a = h(q);
      if (a !== undefined) return a;
    }
    return last(q);
  };
}
