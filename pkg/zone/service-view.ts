// What one service publishes, kept compact: the zone's tree stops at the service name and this view
// answers for the names at and below it (`<host>.<svc>...`, `_<port>._<proto>.<svc>...`). Records are
// made at query time (and then pre-encoded by the answer cache), so the zone holds one small object
// per service instead of one per record: 10,000 headless services with 50,000 endpoints fit in a few
// tens of megabytes.

import type { EndpointSetInfo, PortInfo, ServiceInfo, ServiceKind } from '../cluster/model.ts';
import { dashedIP } from '../cluster/ip.ts';

/** The SRV records under one `_<port>._<proto>` name. */
export interface SrvSet {
  /** `_http`, lowercased. */
  portLabel: string;
  /** `_tcp`, lowercased. */
  protoLabel: string;
  port: number;
  /** Endpoint host labels (headless), or null: the target is the service itself (ClusterIP). */
  hosts: string[] | null;
}

export interface HostEntry {
  name: string;
  ips: string[];
}

export interface ServiceView {
  key: string;
  kind: ServiceKind;
  /** `<svc>.<ns>.svc.<zone>`. */
  fqdn: string;
  /** A/AAAA at the service name: cluster IPs, or the published endpoint addresses (headless). */
  addresses: string[];
  /** ExternalName target, or null. */
  cname: string | null;
  /**
   * Headless endpoint names and their addresses (every address kept: the original kept only the
   * last). A list rather than a Map: most services have a handful, and it is searched only on a miss.
   */
  hosts: HostEntry[] | null;
  srv: SrvSet[];
}

const named = (ports: PortInfo[]): PortInfo[] => ports.filter((p) => p.name !== '');

function srvSet(p: PortInfo, hosts: string[] | null): SrvSet {
  return { portLabel: `_${p.name.toLowerCase()}`, protoLabel: `_${p.protocol.toLowerCase()}`, port: p.port, hosts };
}

export function buildServiceView(key: string, svc: ServiceInfo, sets: EndpointSetInfo[], zone: string): ServiceView {
  const view: ServiceView = { key, kind: svc.kind, fqdn: `${svc.name}.${svc.namespace}.svc.${zone}`, addresses: [], cname: null, hosts: null, srv: [] };
  switch (svc.kind) {
    case 'ExternalName':
      view.cname = svc.externalName;
      break;
    case 'ClusterIP':
      view.addresses = svc.clusterIPs;
      view.srv = named(svc.ports).map((p) => srvSet(p, null));
      break;
    case 'Headless':
      addEndpoints(view, svc, sets);
      break;
  }
  return view;
}

function addEndpoints(view: ServiceView, svc: ServiceInfo, sets: EndpointSetInfo[]): void {
  const hosts = new Map<string, string[]>();
  const addresses = new Set<string>();
  for (const set of sets) {
    // A Set: a slice holds up to 1,000 endpoints, and a list searched for each would be quadratic.
    const names = new Set<string>();
    for (const ep of set.endpoints) {
      if (!ep.ready && !svc.publishNotReadyAddresses) continue;
      for (const ip of ep.addresses) {
        // An endpoint without a hostname gets one stable name per address, so every SRV target resolves.
        const host = ep.hostname || dashedIP(ip);
        const known = hosts.get(host);
        if (!known) hosts.set(host, [ip]);
        else if (!known.includes(ip)) known.push(ip);
        names.add(host);
        addresses.add(ip);
      }
    }
    if (names.size === 0) continue;
    const targets = [...names];
    for (const p of named(set.ports)) view.srv.push(srvSet(p, targets));
  }
  // A headless service with nothing published does not exist (spec §2.4.1: NXDOMAIN).
  if (hosts.size === 0) return;
  view.hosts = [...hosts].map(([name, ips]) => ({ name, ips }));
  view.addresses = [...addresses];
}

/** A headless service without published endpoints has no names at all. */
export function findHost(view: ServiceView, name: string): HostEntry | undefined {
  return view.hosts?.find((h) => h.name === name);
}

export function isEmptyView(view: ServiceView): boolean {
  return view.cname === null && view.addresses.length === 0 && view.hosts === null;
}
