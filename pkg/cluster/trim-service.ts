// Service → ServiceInfo: what kind of records the service gets (ClusterIP, Headless, ExternalName),
// its addresses and ports.

import { canonicalIP } from './ip.ts';
import type { KubeObject } from '../source/source.ts';
import type { ServiceInfo, ServiceKind } from './model.ts';
import { asArray, asRecord, badNames, exact, isDns1123Subdomain, objectRef, trimPorts, unusable } from './trim-common.ts';
import type { ObjectRef, TrimResult } from './trim-common.ts';
import { OBJECT_META } from '../source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../source/kubernetes-protobuf.ts';

/** The annotation kube-dns honoured before spec.publishNotReadyAddresses existed. */
export const TOLERATE_UNREADY_ANNOTATION = 'service.alpha.kubernetes.io/tolerate-unready-endpoints';

/** What trimService reads, in protobuf (core/v1 Service, ServiceSpec, ServicePort). */
export const SERVICE_FIELDS: ProtoSchema = {
  1: ['metadata', 'message', OBJECT_META],
  2: ['spec', 'message', {
    1: ['ports', 'messages', { 1: ['name', 'string'], 2: ['protocol', 'string'], 3: ['port', 'int'] }],
    3: ['clusterIP', 'string'],
    4: ['type', 'string'],
    10: ['externalName', 'string'],
    13: ['publishNotReadyAddresses', 'bool'],
    18: ['clusterIPs', 'strings'],
  }],
};

/** Trims a Service; tolerates any shape at run time (a broken object gives problems, never a throw). */
export function trimService(obj: KubeObject): TrimResult<ServiceInfo> {
  const ref = objectRef('service', obj);
  const problems: string[] = [];
  const names = badNames(ref);
  if (names) return unusable(ref, names, problems);

  const spec = asRecord(asRecord(obj)?.spec) ?? {};
  const annotations = asRecord(asRecord(asRecord(obj)?.metadata)?.annotations);
  const info: ServiceInfo = {
    namespace: ref.namespace,
    name: ref.name,
    kind: 'ClusterIP',
    clusterIPs: [],
    externalName: '',
    ports: exact(trimPorts(spec.ports, ref, problems)),
    publishNotReadyAddresses:
      spec.publishNotReadyAddresses === true || annotations?.[TOLERATE_UNREADY_ANNOTATION] === 'true',
  };

  if (spec.type === 'ExternalName') {
    const target = externalName(spec.externalName);
    if (target === null) {
      return unusable(ref, `externalName ${JSON.stringify(spec.externalName)} is not a valid DNS name`, problems);
    }
    info.kind = 'ExternalName';
    info.externalName = target;
    return { value: info, problems };
  }

  const kind = clusterIPs(spec, ref, info.clusterIPs, problems);
  if (kind === null) return unusable(ref, 'no valid clusterIP left', problems);
  info.kind = kind;
  info.clusterIPs = exact(info.clusterIPs);
  return { value: info, problems };
}

/** spec.externalName lowercased without its trailing dot, or null if it is not a DNS-1123 subdomain. */
function externalName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  let name = raw.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  return isDns1123Subdomain(name) ? name : null;
}

/**
 * Fills `out` with the canonical cluster IPs and returns the kind: Headless for "None" or no IP at all,
 * ClusterIP when at least one IP is valid, null when IPs were given and none was valid.
 */
function clusterIPs(spec: Record<string, unknown>, ref: ObjectRef, out: string[], problems: string[]): ServiceKind | null {
  const list = asArray(spec.clusterIPs);
  const raw: unknown[] = list.length > 0 ? list : spec.clusterIP === undefined ? [] : [spec.clusterIP];
  const primary = spec.clusterIP ?? raw[0];
  if (primary === undefined || primary === null || primary === '' || primary === 'None') return 'Headless';
  for (const ip of raw) {
    const canonical = typeof ip === 'string' ? canonicalIP(ip) : null;
    if (canonical === null) {
      problems.push(`${ref.text}: clusterIP ${JSON.stringify(ip)} is not an IP, dropped`);
    } else if (!out.includes(canonical)) {
      out.push(canonical);
    }
  }
  return out.length > 0 ? 'ClusterIP' : null;
}
