// The hooks a DnsServer reports through, and a wrapper that keeps a throwing hook from
// breaking the query path (a reply already sent must not be counted twice).

import type { Transport } from './responder.ts';
import type { TcpCloseReason } from './tcp.ts';

/** All optional; called synchronously on the query path, so they must be cheap. */
export interface ServerObserver {
  /**
   * `tag`: the Answer.tag the reply was made from (0 for none, and for error replies); `size`: the
   * reply's length in bytes; `truncated`: it went out with TC set; `requestSize`: the request's length.
   */
  response?(qtype: number, rcode: number, transport: Transport, seconds: number, fromCache: boolean, tag: number, size: number, truncated: boolean, requestSize: number): void;
  /** Reasons: 'short', 'qdcount', 'counts', 'label', 'name-too-long', 'question-pointer', 'not-opt', 'bad-opt', 'tcp-frame-length'. */
  malformed?(reason: string): void;
  /** Reasons: 'response-packet' (QR=1), 'tcp-cap', 'handler' (the handler returned null), or the handler's Query.dropReason. */
  dropped?(reason: string): void;
  truncated?(): void;
  /** The handler threw or rejected, or its answer could not be encoded: the client got SERVFAIL. */
  handlerError?(err: unknown): void;
  /** A socket-level error (e.g. a failed UDP send); the server keeps running. */
  socketError?(transport: Transport, err: unknown): void;
  /** The server closed a TCP connection: 'idle', 'stalled' (a frame unfinished in time), 'evicted' (room for a newcomer at the cap). */
  tcpClosed?(reason: TcpCloseReason): void;
  /** A cached answer, made from an Answer with this `tag`, is asked again of the handler ahead of its expiry (Answer.prefetch). */
  prefetch?(tag: number): void;
}

type Hook = (a?: unknown, b?: unknown, c?: unknown, d?: unknown, e?: unknown, f?: unknown, g?: unknown, h?: unknown, i?: unknown) => void;

/** Same hooks, bound to their object, never throwing; missing hooks stay undefined. */
export function guardObserver(o: ServerObserver | undefined): ServerObserver {
  const out: Record<string, Hook | undefined> = {};
  if (o === undefined) return out;
  for (const name of ['response', 'malformed', 'dropped', 'truncated', 'handlerError', 'socketError', 'tcpClosed', 'prefetch'] as const) {
    const fn = o[name] as Hook | undefined;
    if (typeof fn !== 'function') continue;
    // Fixed arity (no rest array, no apply): `response` runs once per query.
    out[name] = (a, b, c, d, e, f, g, h, i) => {
      try {
        fn.call(o, a, b, c, d, e, f, g, h, i);
      } catch {
        // An observer bug must not cost a client its answer.
      }
    };
  }
  return out as ServerObserver;
}
