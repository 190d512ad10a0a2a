// Which servers kube-dns forwards to: the ConfigMap's upstreamNameservers, else --nameservers, else
// the node's resolv.conf; stub domains from the ConfigMap (the original ignored them for ExternalName
// targets, kubernetes/dns#243: here they route every forwarded name, those targets included).

const { isIP } = process.getBuiltinModule('node:net');
import { lookup } from 'node:dns/promises';
import type { KubeDnsConfig } from '../config/config.ts';
import { parseStubServer, parseUpstream } from '../config/config.ts';
import type { Forwarder, Upstream } from '../forward/forward.ts';
import { resolvConfNameservers } from '../forward/forward.ts';
import { Type } from '../dns/constants.ts';
import type { AddressData } from '../dns/message.ts';
import type { Zone } from '../zone/zone.ts';
import type { Logger } from '../log/log.ts';

export interface UpstreamSources {
  flagNameservers: string[];
  resolvConf: string;
  zone: Zone;
  log: Logger;
}

export async function applyUpstreams(forwarder: Forwarder, config: KubeDnsConfig, src: UpstreamSources): Promise<Upstream[]> {
  let upstreams: Upstream[];
  let from: string;
  if (config.upstreamNameservers.length > 0) {
    upstreams = config.upstreamNameservers.map((s) => parseUpstream(s));
    from = 'config upstreamNameservers';
  } else if (src.flagNameservers.length > 0) {
    upstreams = src.flagNameservers.map((s) => parseUpstream(s));
    from = '--nameservers';
  } else {
    // Re-read each time: the original's empty-upstreams bug (kubernetes/dns#224) came from a stale copy.
    upstreams = resolvConfNameservers(src.resolvConf);
    from = src.resolvConf;
  }
  forwarder.setUpstreams(upstreams);
  const stubs = new Map<string, Upstream[]>();
  for (const [domain, servers] of config.stubDomains) {
    const resolved: Upstream[] = [];
    for (const s of servers) {
      const u = await resolveServer(s, src);
      if (u) resolved.push(u);
    }
    if (resolved.length > 0) stubs.set(domain, resolved);
  }
  forwarder.setStubDomains(stubs, config.forwardExcept);
  src.log.info('upstreams configured', {
    from,
    upstreams: upstreams.map((u) => `${u.host}:${u.port}`).join(','),
    stubDomains: [...stubs.keys()].join(',') || undefined,
  });
  return upstreams;
}

/** A stub server may be a name: cluster names resolve in our own zone, others through the system resolver. */
async function resolveServer(server: string, src: UpstreamSources): Promise<Upstream | null> {
  const u = parseStubServer(server);
  if (isIP(u.host)) return u;
  const name = u.host.toLowerCase().replace(/\.$/, '');
  try {
    if (src.zone.contains(name)) {
      const found = src.zone.lookup(name, Type.A).answers.find((a) => a.type === Type.A);
      if (found) return { host: (found.data as AddressData).address, port: u.port };
    } else {
      const { address } = await lookup(name);
      return { host: address, port: u.port };
    }
  } catch (err) {
    src.log.warn('stub domain server name did not resolve, skipped', { server, err });
    return null;
  }
  src.log.warn('stub domain server name did not resolve, skipped', { server });
  return null;
}
