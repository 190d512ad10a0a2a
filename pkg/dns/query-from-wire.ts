// A Query as a handler gets it, made again from the request's bytes: for a server that hands its
// misses to another thread (pkg/dnsthreads), where only bytes cross. The request passed the asking
// server's checks already; what still fails to parse throws DnsParseError.

import { HEADER_SIZE } from './constants.ts';
import { clientSubnetOf } from './client-subnet.ts';
import { OFF_ARCOUNT, u16 } from './header.ts';
import { parseMessage } from './parse.ts';
import { emptyOptView, readOpt, readQuestion } from './question.ts';
import type { OptView } from './question.ts';
import type { Transport } from './responder.ts';
import { queryOf } from './server.ts';
import type { Query } from './server.ts';

export function queryFromWire(wire: Buffer, transport: Transport, remoteAddress: string, remotePort: number, prefetch = false): Query {
  const message = parseMessage(wire);
  return queryOf(message, wire, transport, remoteAddress, remotePort, clientSubnetOf(wire, optViewOf(wire)), prefetch);
}

/** The request's OPT as the asking server read it (its Client Subnet's place, for one): empty without one. */
export function optViewOf(wire: Buffer): OptView {
  const view = emptyOptView();
  const qEnd = readQuestion(wire, HEADER_SIZE);
  if (u16(wire, OFF_ARCOUNT) === 1 && qEnd > 0) readOpt(wire, qEnd, view);
  return view;
}
