// Turns one service (and its endpoint sets) into the records it publishes, per the Kubernetes DNS
// spec 1.1.0. Pure: the zone decides where they go.

import { Type } from '../dns/constants.ts';
import type { EndpointSetInfo, PortInfo, ServiceInfo } from '../cluster/model.ts';
import { dashedIP, ipFamily } from '../cluster/ip.ts';
import type { ZoneRecord } from './tree.ts';

/** A record at a name below the zone apex; `labels` in query order ("web", "default", "svc"). */
export interface PlacedRecord {
  labels: string[];
  record: ZoneRecord;
}

export interface PtrRecord {
  ip: string;
  /** Fully qualified target without trailing dot. */
  target: string;
}

export interface ServiceRecords {
  records: PlacedRecord[];
  ptrs: PtrRecord[];
}

/** SRV priority and weight: the original's priority 10; weights share 100 (RFC 2782 load spreading). */
const SRV_PRIORITY = 10;

function addressRecord(ip: string): ZoneRecord {
  return { type: ipFamily(ip) === 4 ? Type.A : Type.AAAA, data: { address: ip } };
}

function srvLabels(port: PortInfo, service: string[]): string[] {
  return [`_${port.name.toLowerCase()}`, `_${port.protocol.toLowerCase()}`, ...service];
}

function srvRecord(port: number, weight: number, target: string): ZoneRecord {
  return { type: Type.SRV, data: { priority: SRV_PRIORITY, weight, port, target } };
}

const named = (ports: PortInfo[]): PortInfo[] => ports.filter((p) => p.name !== '');

export function buildServiceRecords(svc: ServiceInfo, sets: EndpointSetInfo[], zone: string): ServiceRecords {
  const base = [svc.name, svc.namespace, 'svc'];
  const fqdn = `${base.join('.')}.${zone}`;
  switch (svc.kind) {
    case 'ExternalName':
      return { records: [{ labels: base, record: { type: Type.CNAME, data: { target: svc.externalName } } }], ptrs: [] };
    case 'ClusterIP':
      return clusterIPRecords(svc, base, fqdn);
    case 'Headless':
      return headlessRecords(svc, sets, base, fqdn);
  }
}

function clusterIPRecords(svc: ServiceInfo, base: string[], fqdn: string): ServiceRecords {
  const records: PlacedRecord[] = svc.clusterIPs.map((ip) => ({ labels: base, record: addressRecord(ip) }));
  const ports = named(svc.ports);
  for (const p of ports) {
    const srv = srvRecord(p.port, 100, fqdn);
    records.push({ labels: srvLabels(p, base), record: srv });
  }
  // The service name itself lists every named port (the original answered port 0 with a hashed target here).
  const weight = Math.max(1, Math.floor(100 / Math.max(1, ports.length)));
  for (const p of ports) records.push({ labels: base, record: srvRecord(p.port, weight, fqdn) });
  return { records, ptrs: svc.clusterIPs.map((ip) => ({ ip, target: fqdn })) };
}

interface Published {
  /** Endpoint name label → its addresses (every address kept: the original kept only the last). */
  hosts: Map<string, string[]>;
  /** Per endpoint set, the endpoint names it contributes and its ports. */
  groups: { names: string[]; ports: PortInfo[] }[];
}

function publishedEndpoints(svc: ServiceInfo, sets: EndpointSetInfo[]): Published {
  const hosts = new Map<string, string[]>();
  const groups: Published['groups'] = [];
  for (const set of sets) {
    const names: string[] = [];
    for (const ep of set.endpoints) {
      if (!ep.ready && !svc.publishNotReadyAddresses) continue;
      // An endpoint without a hostname gets one stable name per address, so every SRV target resolves.
      const labels = ep.hostname ? [ep.hostname] : ep.addresses.map(dashedIP);
      for (let i = 0; i < labels.length; i++) {
        const addrs = ep.hostname ? ep.addresses : [ep.addresses[i]];
        const known = hosts.get(labels[i]);
        if (known) for (const a of addrs) (known.includes(a) || known.push(a));
        else hosts.set(labels[i], [...addrs]);
        if (!names.includes(labels[i])) names.push(labels[i]);
      }
    }
    if (names.length > 0) groups.push({ names, ports: named(set.ports) });
  }
  return { hosts, groups };
}

function headlessRecords(svc: ServiceInfo, sets: EndpointSetInfo[], base: string[], fqdn: string): ServiceRecords {
  const { hosts, groups } = publishedEndpoints(svc, sets);
  const records: PlacedRecord[] = [];
  const ptrs: PtrRecord[] = [];
  const serviceIPs = new Set<string>();
  for (const [host, addrs] of hosts) {
    const labels = [host, ...base];
    for (const ip of addrs) {
      records.push({ labels, record: addressRecord(ip) });
      ptrs.push({ ip, target: `${host}.${fqdn}` });
      serviceIPs.add(ip);
    }
  }
  for (const ip of serviceIPs) records.push({ labels: base, record: addressRecord(ip) });
  const srvCount = new Map<string, number>();
  const srvs: { labels: string[]; port: number; target: string }[] = [];
  for (const g of groups) {
    for (const p of g.ports) {
      // Each named port under its _port._proto name, and all of them under the service name.
      for (const labels of [srvLabels(p, base), base]) {
        const k = labels.join('.');
        for (const host of g.names) {
          srvs.push({ labels, port: p.port, target: `${host}.${fqdn}` });
          srvCount.set(k, (srvCount.get(k) ?? 0) + 1);
        }
      }
    }
  }
  for (const s of srvs) {
    const weight = Math.max(1, Math.floor(100 / srvCount.get(s.labels.join('.'))!));
    records.push({ labels: s.labels, record: srvRecord(s.port, weight, s.target) });
  }
  return { records, ptrs };
}
