// --dns-loop-detect, as dnsmasq's loop.c: each default (non-domain) server is sent a TXT query for
// `<8 hex digits>.test`, a name that stands for that server. If one of those names comes back to us
// as a query, the server it was sent to hands our queries back to us: it is taken off the default
// route until the next reload (which probes again), and the returning probe is dropped unanswered.
//
// Probes go out on their own short-lived socket, not through the Forwarder, so they are not counted
// in the per-server counters (servers.bind) nor in the forwarder's stats, and their replies are not
// read. A returning probe is caught before the cache, so it is neither a miss nor cached.

const { randomBytes } = process.getBuiltinModule('node:crypto');
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { Class, Type } from '../dns/constants.ts';
import { encodeMessage } from '../dns/codec.ts';
import { emptyMessage } from '../dns/message.ts';
import type { Forwarder, Upstream } from '../forward/forward.ts';
import { normalizeUpstream, serverKey } from '../forward/forward.ts';
import type { Logger } from '../log/log.ts';

/** `<8 hex>.test`: 13 characters, as dnsmasq's LOOP_TEST_DOMAIN probes. */
const PROBE_LENGTH = 13;
const PROBE_SUFFIX = '.test';

export interface LoopStats {
  /** Probes sent. */
  probes: number;
  /** Probes that came back: servers disabled (or already disabled). */
  loops: number;
}

export class LoopDetector {
  readonly stats: LoopStats = { probes: 0, loops: 0 };
  private readonly forwarder: Forwarder;
  private readonly log: Logger;
  /** Probe name → the server it was sent to; one stable name per server while it stays configured. */
  private byName = new Map<string, Upstream>();

  constructor(forwarder: Forwarder, log: Logger) {
    this.forwarder = forwarder;
    this.log = log;
  }

  /**
   * Sends one probe to each of `servers` (the default route). Names of servers no longer listed are
   * forgotten. Resolves once every probe was handed to the kernel (send errors are logged).
   */
  async probe(servers: readonly Upstream[]): Promise<void> {
    const previous = new Map<string, string>();
    for (const [name, u] of this.byName) previous.set(serverKey(u), name);
    const next = new Map<string, Upstream>();
    const seen = new Set<string>();
    for (const raw of servers) {
      const u = normalizeUpstream(raw);
      const key = serverKey(u);
      if (seen.has(key)) continue;
      seen.add(key);
      next.set(previous.get(key) ?? `${randomBytes(4).toString('hex')}${PROBE_SUFFIX}`, u);
    }
    this.byName = next;
    const sockets: Partial<Record<'udp4' | 'udp6', Socket>> = {};
    const sends: Promise<void>[] = [];
    for (const [name, u] of next) {
      const family = u.host.includes(':') ? 'udp6' : 'udp4';
      const socket = (sockets[family] ??= this.socket(family));
      this.stats.probes++;
      sends.push(
        new Promise((resolve) => {
          socket.send(probeQuery(name), u.port, u.host, (err) => {
            if (err) this.log.warn('cannot send loop probe', { server: serverKey(u), err });
            resolve();
          });
        }),
      );
    }
    await Promise.all(sends);
    // Replies from servers that do not loop are not needed: dnsmasq does not read them either.
    await Promise.all(Object.values(sockets).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }

  /**
   * True when the query is one of our probes come back (drop it, unanswered, as dnsmasq does); the
   * server it was sent to is then off the default route. Cheap for every other query.
   */
  caught(qname: string, qtype: number, qclass: number): boolean {
    if (qtype !== Type.TXT || qname.length !== PROBE_LENGTH || qclass !== Class.IN) return false;
    const server = this.byName.get(qname);
    if (server === undefined) return false;
    this.stats.loops++;
    if (this.forwarder.disable(server)) {
      this.log.warn('NOT using nameserver - query loop detected', { server: serverKey(server), probe: qname });
    }
    return true;
  }

  private socket(family: 'udp4' | 'udp6'): Socket {
    const socket = createSocket({ type: family });
    socket.on('error', (err) => this.log.warn('loop probe socket failed', { err }));
    return socket;
  }
}

/** A TXT query for `name`, RD set and a random ID, as dnsmasq's loop_make_probe. */
function probeQuery(name: string): Uint8Array {
  const m = emptyMessage();
  m.id = randomBytes(2).readUInt16BE(0);
  m.rd = true;
  m.questions.push({ name, type: Type.TXT, class: Class.IN });
  return encodeMessage(m).bytes;
}
