// Why a forward() did not produce a reply. The caller answers SERVFAIL for every code except
// FORWARD_BAD_QUERY (FORMERR) and FORWARD_OVERLOADED (REFUSED, as CoreDNS's max_concurrent does).

export type ForwardErrorCode =
  | 'FORWARD_NO_SERVERS' // no upstream for this name
  | 'FORWARD_ALL_FAILED' // every upstream timed out or failed
  | 'FORWARD_OUT_OF_TIME' // the caller's budget ran out before any upstream answered
  | 'FORWARD_BAD_QUERY' // the query has no readable question
  | 'FORWARD_OVERLOADED' // maxInFlight queries are already waiting
  | 'FORWARD_CLOSED' // close() was called
  | 'FORWARD_BAD_UPSTREAM'; // setUpstreams/setStubDomains got something that is not ip + port

export class ForwardError extends Error {
  readonly code: ForwardErrorCode;

  constructor(code: ForwardErrorCode, message: string) {
    super(message);
    this.name = 'ForwardError';
    this.code = code;
  }
}
