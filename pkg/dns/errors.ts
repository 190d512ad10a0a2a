// Errors thrown by the codec. Each carries a stable `code` so callers (and counters) can tell
// a pointer loop from a short read without matching on message text.

export type ParseErrorCode =
  | 'DNS_ERR_SHORT'
  | 'DNS_ERR_POINTER_LOOP'
  | 'DNS_ERR_BAD_POINTER'
  | 'DNS_ERR_LABEL'
  | 'DNS_ERR_NAME_TOO_LONG'
  | 'DNS_ERR_RDATA'
  | 'DNS_ERR_OPT';

export type EncodeErrorCode =
  | 'DNS_ERR_LABEL'
  | 'DNS_ERR_NAME_TOO_LONG'
  | 'DNS_ERR_NAME_ESCAPE'
  | 'DNS_ERR_ADDRESS'
  | 'DNS_ERR_TXT'
  | 'DNS_ERR_RDATA'
  | 'DNS_ERR_RCODE';

export class DnsParseError extends Error {
  readonly code: ParseErrorCode;
  /** Byte offset where decoding failed. */
  readonly offset: number;
  constructor(code: ParseErrorCode, message: string, offset: number) {
    super(message);
    this.name = 'DnsParseError';
    this.code = code;
    this.offset = offset;
  }
}

export class DnsEncodeError extends Error {
  readonly code: EncodeErrorCode;
  constructor(code: EncodeErrorCode, message: string) {
    super(message);
    this.name = 'DnsEncodeError';
    this.code = code;
  }
}

/** Short reason for counters: 'DNS_ERR_POINTER_LOOP' -> 'pointer-loop'. */
export function parseErrorReason(code: string): string {
  return code.replace(/^DNS_ERR_/, '').toLowerCase().replace(/_/g, '-');
}
