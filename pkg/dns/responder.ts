// How the query path hands a reply back to the transport it came from.

export type Transport = 'udp' | 'tcp';

export interface Responder {
  readonly transport: Transport;
  /** Bytes to leave free at the front of a reply (2 for the TCP length prefix). */
  readonly headroom: number;
  /** Sends one reply. For each query exactly one of send() or skip() is called. */
  send(out: Buffer, port: number, address: string): void;
  /** The query ended without a reply (dropped). */
  skip(): void;
}
