// CoreDNS forward's health checks (max_fails, health_check): an upstream whose last tries went
// unanswered more than `maxFails` times in a row is down; queries skip it while another on their
// route is up, and it is probed (`. IN NS`) every `checkMs` until it answers anything, which makes it
// up again. An answer to a query does the same. Without them (maxFails 0) nobody is ever down.

import type { UpstreamServer } from './servers.ts';

export interface HealthOptions {
  /** Unanswered tries in a row past which an upstream is down; 0: never down, never probed. */
  maxFails: number;
  /** How often a down upstream is probed (ms). */
  checkMs: number;
}

/** `. IN NS`, recursion desired, the ID written per probe: CoreDNS's health-check query. */
const PROBE = Buffer.from([0, 0, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1]);
const PROBE_END = PROBE.length;

export class HealthChecks {
  private readonly o: HealthOptions;
  private readonly ask: (probe: Buffer, end: number, server: UpstreamServer) => Promise<boolean>;
  private readonly probing = new Map<UpstreamServer, NodeJS.Timeout>();

  /** `ask`: one probe's exchange, true when anything came back. */
  constructor(o: HealthOptions, ask: (probe: Buffer, end: number, server: UpstreamServer) => Promise<boolean>) {
    this.o = o;
    this.ask = ask;
  }

  down(server: UpstreamServer): boolean {
    return this.o.maxFails > 0 && server.fails > this.o.maxFails;
  }

  unanswered(server: UpstreamServer): void {
    server.fails++;
    if (this.down(server) && !this.probing.has(server)) this.startProbing(server);
  }

  answered(server: UpstreamServer): void {
    server.fails = 0;
    this.stopProbing(server);
  }

  /** Probing only what is still configured. */
  keepOnly(servers: Iterable<UpstreamServer>): void {
    const keep = new Set(servers);
    for (const s of [...this.probing.keys()]) if (!keep.has(s)) this.stopProbing(s);
  }

  stop(): void {
    for (const s of [...this.probing.keys()]) this.stopProbing(s);
  }

  private startProbing(server: UpstreamServer): void {
    let inFlight = false;
    const timer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      const probe = Buffer.from(PROBE);
      void this.ask(probe, PROBE_END, server)
        .then((ok) => (ok ? this.answered(server) : server.healthcheckFailures++))
        .finally(() => (inFlight = false));
    }, this.o.checkMs);
    timer.unref();
    this.probing.set(server, timer);
  }

  private stopProbing(server: UpstreamServer): void {
    clearInterval(this.probing.get(server));
    this.probing.delete(server);
  }
}
