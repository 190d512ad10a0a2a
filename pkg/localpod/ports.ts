// The pod's fixed ports, checked before anything starts: a taken port is reported by the flag that
// moves it, instead of surfacing as one child's bind error among the others' start-up lines.

import { createSocket } from 'node:dgram';
const { createServer } = process.getBuiltinModule('node:net');
import { LOOPBACK } from './plan.ts';
import type { LocalPodOptions } from './plan.ts';

export interface PortUse {
  port: number;
  /** The launcher flag that sets it. */
  flag: string;
  /** Who listens there, for messages and the banner. */
  what: string;
  /** DNS ports need UDP as well as TCP. */
  udp: boolean;
}

export function portUses(o: LocalPodOptions): PortUse[] {
  return [
    { port: o.dnsPort, flag: '--dns-port', what: 'dnscache (DNS for clients)', udp: true },
    { port: o.kubednsPort, flag: '--kubedns-port', what: 'kube-dns (DNS)', udp: true },
    { port: o.healthzPort, flag: '--healthz-port', what: 'kube-dns (HTTP)', udp: false },
    { port: o.sidecarPort, flag: '--sidecar-port', what: 'sidecar (HTTP)', udp: false },
    { port: o.nannyMetricsPort, flag: '--nanny-metrics-port', what: 'dnsmasq-nanny (HTTP)', udp: false },
  ];
}

/** Two flags naming the same port: the reason, or null. */
export function portClash(uses: readonly PortUse[]): string | null {
  for (let i = 0; i < uses.length; i++) {
    for (let j = i + 1; j < uses.length; j++) {
      if (uses[i].port === uses[j].port) return `${uses[i].flag} and ${uses[j].flag} are both ${uses[i].port}`;
    }
  }
  return null;
}

function tcpBindError(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ port, host: LOOPBACK, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

function udpBindError(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.close();
      resolve(err.code ?? err.message);
    });
    socket.bind({ port, address: LOOPBACK, exclusive: true }, () => socket.close(() => resolve(null)));
  });
}

export interface TakenPort {
  use: PortUse;
  /** The bind error: EADDRINUSE, EACCES. */
  error: string;
  proto: 'tcp' | 'udp';
}

/** The uses whose port cannot be bound on 127.0.0.1 now (TCP, and UDP for DNS). */
export async function takenPorts(uses: readonly PortUse[]): Promise<TakenPort[]> {
  const taken: TakenPort[] = [];
  for (const use of uses) {
    const tcp = await tcpBindError(use.port);
    if (tcp !== null) {
      taken.push({ use, error: tcp, proto: 'tcp' });
      continue;
    }
    const udp = use.udp ? await udpBindError(use.port) : null;
    if (udp !== null) taken.push({ use, error: udp, proto: 'udp' });
  }
  return taken;
}

export function describeTaken(t: TakenPort): string {
  const why = t.error === 'EADDRINUSE' ? 'is in use' : `cannot be bound (${t.error})`;
  return `${LOOPBACK}:${t.use.port}/${t.proto} for ${t.use.what} ${why}: free it or pick another port with ${t.use.flag}=`;
}
