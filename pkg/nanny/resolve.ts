// Stub domain servers given as names (kubernetes/dns#82): dnsmasq exits on a --server it cannot
// parse, so every name becomes an IP here first. Cluster names (under a domain the child's args send
// to kube-dns) are asked of kube-dns over UDP, A then AAAA; others go to the system resolver. The
// first address wins. A name that does not resolve is left out and tried again at the next sync.

const { isIP } = process.getBuiltinModule('node:net');
import { lookup } from 'node:dns/promises';
import { encodeMessage, parseMessage } from '../dns/codec.ts';
import { Class, Rcode, Type, rcodeName } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import type { AddressData } from '../dns/message.ts';
import { Forwarder } from '../forward/forward.ts';
import { normalizeDomain, parseStubServer, parseUpstream } from '../config/config.ts';
import type { HostPort, KubeDnsConfig } from '../config/config.ts';
import type { Logger } from '../log/log.ts';
import { underDomain } from './args.ts';
import type { ServerEntry } from './args.ts';

export interface StubResolverOptions {
  /** -kubednsServer. */
  kubedns: HostPort;
  /** Names at or under these are cluster names (see kubednsDomains). */
  clusterDomains: readonly string[];
  log: Logger;
  /** Per query to kube-dns. Default 2000. */
  timeoutMs?: number;
}

export interface ResolvedServers {
  entries: ServerEntry[];
  /** Stub servers (as written) left out because their name did not resolve. */
  unresolved: string[];
}

type Resolution = { address: string } | { error: string };

export class StubResolver {
  /** Name resolutions that failed (each try counts). */
  readonly stats = { failures: 0 };
  private readonly clusterDomains: readonly string[];
  private readonly log: Logger;
  private readonly kubedns: Forwarder;
  /** Server → the last failure logged, so a name that keeps failing warns once, not every sync. */
  private readonly failing = new Map<string, string>();

  constructor(opts: StubResolverOptions) {
    this.clusterDomains = opts.clusterDomains;
    this.log = opts.log;
    this.kubedns = new Forwarder({ timeoutMs: opts.timeoutMs ?? 2000, udpSockets: 1, log: opts.log });
    this.kubedns.setUpstreams([opts.kubedns]);
  }

  /** The config's servers in order, names resolved; upstreams are IPs already (validated). */
  async servers(config: KubeDnsConfig): Promise<ResolvedServers> {
    const entries: ServerEntry[] = [];
    const unresolved: string[] = [];
    for (const [domain, servers] of config.stubDomains) {
      for (const server of servers) {
        const { host, port } = parseStubServer(server);
        if (isIP(host) !== 0) {
          entries.push({ domain, host, port });
          continue;
        }
        const r = await this.resolve(normalizeDomain(host));
        if ('address' in r) {
          if (this.failing.delete(server)) this.log.info('stub domain server name resolved', { domain, server, address: r.address });
          entries.push({ domain, host: r.address, port });
          continue;
        }
        this.stats.failures++;
        unresolved.push(server);
        if (this.failing.get(server) !== r.error) {
          this.log.warn('stub domain server name did not resolve, left out until it does', { domain, server, err: r.error });
          this.failing.set(server, r.error);
        }
      }
    }
    for (const server of config.upstreamNameservers) entries.push({ domain: null, ...parseUpstream(server) });
    return { entries, unresolved };
  }

  /** One name (lowercase, no trailing dot) → its first address. */
  async resolve(name: string): Promise<Resolution> {
    if (!underDomain(name, this.clusterDomains)) {
      try {
        return { address: (await lookup(name)).address };
      } catch (err) {
        return { error: (err as Error).message };
      }
    }
    const a = await this.ask(name, Type.A);
    if ('address' in a) return a;
    const aaaa = await this.ask(name, Type.AAAA);
    return 'address' in aaaa ? aaaa : { error: `${a.error}; AAAA: ${aaaa.error}` };
  }

  close(): Promise<void> {
    return this.kubedns.close();
  }

  private async ask(name: string, type: number): Promise<Resolution> {
    const query = emptyMessage();
    query.rd = true;
    query.questions.push({ name, type, class: Class.IN });
    try {
      const reply = parseMessage(await this.kubedns.forward(encodeMessage(query).bytes, name));
      if (reply.rcode !== Rcode.NOERROR) return { error: `kube-dns answered ${rcodeName(reply.rcode)}` };
      const found = reply.answers.find((rr) => rr.type === type);
      return found ? { address: (found.data as AddressData).address } : { error: 'kube-dns has no address for it' };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }
}
