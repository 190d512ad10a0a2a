// Errors the sidecar's DNS client and statistics reader throw. The message is what /healthcheck and
// the log show; the code is for callers that must tell a timeout from an unreadable reply.

export type SidecarErrorCode =
  /** No matching reply within the timeout. */
  | 'SIDECAR_TIMEOUT'
  /** The socket failed: connection refused (ICMP port unreachable on UDP), reset, closed early. */
  | 'SIDECAR_NETWORK'
  /** A reply with our ID that cannot be decoded. */
  | 'SIDECAR_BAD_REPLY'
  /** A CHAOS statistics reply that is not exactly one TXT record holding one integer. */
  | 'SIDECAR_BAD_STAT';

export class SidecarError extends Error {
  readonly code: SidecarErrorCode;
  constructor(code: SidecarErrorCode, message: string) {
    super(message);
    this.name = 'SidecarError';
    this.code = code;
  }
}
