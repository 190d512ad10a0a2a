// One DNS question to one server, as the probes and the statistics reader need it: UDP with a random
// ID, the reply's ID and question checked (anything else on the socket is ignored), TCP when the UDP
// reply is truncated, and one deadline over both. Not a resolver: no retries, no other servers.

import { createSocket } from 'node:dgram';
const { connect } = process.getBuiltinModule('node:net');
const { randomInt } = process.getBuiltinModule('node:crypto');
import { canonicalName, DnsParseError, encodeMessage, parseMessage } from '../dns/codec.ts';
import { HEADER_SIZE } from '../dns/constants.ts';
import { frame, readFrames } from '../dns/frames.ts';
import { B2_QR, OFF_FLAGS, OFF_ID, u16 } from '../dns/header.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Message, Question } from '../dns/message.ts';
import { ipVersion } from '../dns/ip.ts';
import { formatUpstream } from '../forward/forward.ts';
import { SidecarError } from './errors.ts';
import type { DnsServerAddress } from './probe-spec.ts';

export interface ExchangeResult {
  reply: Message;
  transport: 'udp' | 'tcp';
}

/** Queries `server` for `question` (RD set, as the original's) and resolves with the matching reply. */
export async function exchange(server: DnsServerAddress, question: Question, timeoutMs: number): Promise<ExchangeResult> {
  const deadline = Date.now() + timeoutMs;
  const query = emptyMessage(randomInt(0, 0x10000));
  query.rd = true;
  query.questions.push(question);
  const wire = encodeMessage(query).bytes;
  const udp = await overUdp(server, wire, query, timeoutMs);
  if (!udp.tc) return { reply: udp, transport: 'udp' };
  // The whole answer did not fit in a datagram: ask again over TCP within what is left of the time.
  const left = deadline - Date.now();
  if (left <= 0) throw timeout('tcp', server, timeoutMs);
  return { reply: await overTcp(server, wire, query, left), transport: 'tcp' };
}

function timeout(transport: string, server: DnsServerAddress, ms: number): SidecarError {
  return new SidecarError('SIDECAR_TIMEOUT', `${transport} ${formatUpstream(server)}: no reply within ${ms} ms`);
}

function networkError(transport: string, server: DnsServerAddress, err: NodeJS.ErrnoException): SidecarError {
  const what = err.code === 'ECONNREFUSED' ? 'connection refused' : err.code === 'ECONNRESET' ? 'connection reset' : err.message;
  return new SidecarError('SIDECAR_NETWORK', `${transport} ${formatUpstream(server)}: ${what}`);
}

/**
 * The reply to `query` in `buf`: null when the bytes are not ours (short, a query, another ID, another
 * question), an error when they carry our ID but cannot be read.
 */
export function matchReply(buf: Uint8Array, query: Message): Message | SidecarError | null {
  if (buf.length < HEADER_SIZE || (buf[OFF_FLAGS] & B2_QR) === 0) return null;
  if (u16(buf, OFF_ID) !== query.id) return null;
  let reply: Message;
  try {
    reply = parseMessage(buf);
  } catch (err) {
    if (!(err instanceof DnsParseError)) throw err;
    return new SidecarError('SIDECAR_BAD_REPLY', `unreadable reply: ${err.message}`);
  }
  // Servers may leave the question out of an error reply; when it is there it must be ours.
  if (reply.questions.length > 0) {
    const got = reply.questions[0];
    const want = query.questions[0];
    if (got.type !== want.type || got.class !== want.class || canonicalName(got.name) !== canonicalName(want.name)) return null;
  }
  return reply;
}

/**
 * The end of one exchange: the first of a reply, an error or the deadline settles the promise and
 * runs `cleanup` (close the socket); anything after that is ignored.
 */
function settleOnce(resolve: (m: Message) => void, reject: (e: Error) => void, timeoutMs: number, late: () => Error, cleanup: () => void): (r: Message | Error) => void {
  let settled = false;
  const settle = (r: Message | Error): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    cleanup();
    if (r instanceof Error) reject(r);
    else resolve(r);
  };
  const timer = setTimeout(() => settle(late()), timeoutMs);
  return settle;
}

function overUdp(server: DnsServerAddress, wire: Uint8Array, query: Message, timeoutMs: number): Promise<Message> {
  // Connected, so an ICMP port unreachable comes back as ECONNREFUSED instead of a silent timeout.
  const socket = createSocket(ipVersion(server.host) === 6 ? 'udp6' : 'udp4');
  return new Promise((resolve, reject) => {
    const settle = settleOnce(resolve, reject, timeoutMs, () => timeout('udp', server, timeoutMs), () => socket.close());
    socket.on('error', (err) => settle(networkError('udp', server, err)));
    socket.on('message', (buf) => {
      const r = matchReply(buf, query);
      if (r !== null) settle(r);
    });
    socket.connect(server.port, server.host, () => {
      socket.send(wire, (err) => {
        if (err) settle(networkError('udp', server, err));
      });
    });
  });
}

function overTcp(server: DnsServerAddress, wire: Uint8Array, query: Message, timeoutMs: number): Promise<Message> {
  const socket = connect({ host: server.host, port: server.port });
  socket.setNoDelay(true);
  return new Promise((resolve, reject) => {
    const settle = settleOnce(resolve, reject, timeoutMs, () => timeout('tcp', server, timeoutMs), () => socket.destroy());
    socket.on('error', (err) => settle(networkError('tcp', server, err)));
    socket.on('close', () => settle(new SidecarError('SIDECAR_NETWORK', `tcp ${formatUpstream(server)}: connection closed before the reply`)));
    readFrames(socket, (msg) => {
      const r = matchReply(msg, query);
      if (r !== null) settle(r);
    });
    socket.write(frame(wire));
  });
}
