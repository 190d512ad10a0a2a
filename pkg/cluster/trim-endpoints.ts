// EndpointSlice (discovery/v1) and the legacy Endpoints (core/v1) → EndpointSetInfo: the backends of a
// service, with the hostname and readiness each record needs.

import type { KubeObject } from '../source/source.ts';
import { canonicalIP, ipFamily } from './ip.ts';
import type { EndpointInfo, EndpointSetInfo } from './model.ts';
import { asArray, asRecord, badNames, exact, isDns1123Label, isDns1123Subdomain, objectRef, trimPorts, unusable } from './trim-common.ts';
import type { ObjectRef, TrimResult } from './trim-common.ts';
import { OBJECT_IDENTITY, OBJECT_META } from '../source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../source/kubernetes-protobuf.ts';

/** The label that ties an EndpointSlice to its service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Canonical IP, or null after recording why it was dropped. */
function address(raw: unknown, family: 4 | 6 | 0, where: string, ref: ObjectRef, problems: string[]): string | null {
  const ip = typeof raw === 'string' ? canonicalIP(raw) : null;
  if (ip === null) {
    problems.push(`${ref.text}: ${where} address ${JSON.stringify(raw)} is not an IP, dropped`);
    return null;
  }
  if (family !== 0 && ipFamily(ip) !== family) {
    problems.push(`${ref.text}: ${where} address ${ip} is not IPv${family} like the slice, dropped`);
    return null;
  }
  return ip;
}

/** A hostname if it is a DNS-1123 label, else '' (recording the drop when one was given). */
function hostname(raw: unknown, where: string, ref: ObjectRef, problems: string[]): string {
  if (raw === undefined || raw === null || raw === '') return '';
  if (isDns1123Label(raw)) return raw;
  problems.push(`${ref.text}: ${where} hostname ${JSON.stringify(raw)} is not a DNS-1123 label, dropped`);
  return '';
}

/**
 * An endpoint's pod name (its targetRef's, when a DNS-1123 label: a pod named with dots would make more
 * labels than one), for `podNames`; else ''.
 */
function podName(targetRef: unknown): string {
  const name = asRecord(targetRef)?.name;
  return isDns1123Label(name) ? name : '';
}

/** What trimEndpointSlice reads, in protobuf (discovery/v1 EndpointSlice, Endpoint, EndpointPort). */
export const ENDPOINT_SLICE_FIELDS: ProtoSchema = {
  // Its annotations are read only of watched slices (the trigger time), and those come as JSON.
  1: ['metadata', 'message', { ...OBJECT_IDENTITY, 11: ['labels', 'map'] }],
  2: ['endpoints', 'messages', {
    1: ['addresses', 'strings'],
    2: ['conditions', 'message', { 1: ['ready', 'bool'] }],
    3: ['hostname', 'string'],
    4: ['targetRef', 'message', { 3: ['name', 'string'] }],
  }],
  3: ['ports', 'messages', { 1: ['name', 'string'], 2: ['protocol', 'string'], 3: ['port', 'int'] }],
  4: ['addressType', 'string'],
};

/** What trimEndpoints reads, in protobuf (core/v1 Endpoints, EndpointSubset, EndpointAddress, EndpointPort). */
const ENDPOINT_ADDRESS_FIELDS: ProtoSchema = { 1: ['ip', 'string'], 3: ['hostname', 'string'] };
export const ENDPOINTS_FIELDS: ProtoSchema = {
  1: ['metadata', 'message', OBJECT_META],
  2: ['subsets', 'messages', {
    1: ['addresses', 'messages', ENDPOINT_ADDRESS_FIELDS],
    2: ['notReadyAddresses', 'messages', ENDPOINT_ADDRESS_FIELDS],
    3: ['ports', 'messages', { 1: ['name', 'string'], 2: ['port', 'int'], 3: ['protocol', 'string'] }],
  }],
};

/**
 * Trims an EndpointSlice; FQDN slices give no value (DNS has no use for them). `podNames`: an endpoint
 * without a hostname takes its targetRef's name (CoreDNS's endpoint_pod_names).
 */
export function trimEndpointSlice(obj: KubeObject, podNames = false): TrimResult<EndpointSetInfo> {
  const ref = objectRef('endpointslice', obj);
  const problems: string[] = [];
  if (!isDns1123Label(ref.namespace)) {
    return unusable(ref, `namespace ${JSON.stringify(ref.namespace)} is not a DNS-1123 label`, problems);
  }
  if (!isDns1123Subdomain(ref.name)) {
    return unusable(ref, ref.name === '' ? 'metadata.name is missing' : 'name is not a DNS-1123 subdomain', problems);
  }
  const o = asRecord(obj) ?? {};
  const service = asRecord(asRecord(o.metadata)?.labels)?.[SERVICE_NAME_LABEL];
  if (service === undefined) return unusable(ref, `label ${SERVICE_NAME_LABEL} is missing`, problems);
  if (!isDns1123Label(service)) {
    return unusable(ref, `label ${SERVICE_NAME_LABEL} ${JSON.stringify(service)} is not a DNS-1123 label`, problems);
  }
  let family: 4 | 6;
  if (o.addressType === 'IPv4') family = 4;
  else if (o.addressType === 'IPv6') family = 6;
  else if (o.addressType === 'FQDN') return unusable(ref, 'addressType FQDN is not served by DNS, ignored', problems);
  else return unusable(ref, `addressType ${JSON.stringify(o.addressType)} is not IPv4, IPv6 or FQDN`, problems);

  const endpoints: EndpointInfo[] = [];
  const list = asArray(o.endpoints);
  for (let i = 0; i < list.length; i++) {
    const where = `endpoint #${i}`;
    const e = asRecord(list[i]);
    if (!e) {
      problems.push(`${ref.text}: ${where} is not an object, dropped`);
      continue;
    }
    const addresses: string[] = [];
    for (const raw of asArray(e.addresses)) {
      const ip = address(raw, family, where, ref, problems);
      if (ip !== null) addresses.push(ip);
    }
    if (addresses.length === 0) {
      problems.push(`${ref.text}: ${where} has no valid address, dropped`);
      continue;
    }
    // A nil ready condition counts as ready (the API docs; CoreDNS does the same).
    const ready = asRecord(e.conditions)?.ready !== false;
    endpoints.push({ addresses: exact(addresses), hostname: hostname(e.hostname, where, ref, problems) || (podNames ? podName(e.targetRef) : ''), ready });
  }

  const value: EndpointSetInfo = {
    namespace: ref.namespace,
    service,
    id: `slice/${ref.name}`,
    endpoints: exact(endpoints),
    ports: exact(trimPorts(o.ports, ref, problems, true)),
  };
  return { value, problems };
}

/** Trims a core/v1 Endpoints object into one set per subset (`endpoints/<name>/<subset index>`). */
export function trimEndpoints(obj: KubeObject): TrimResult<EndpointSetInfo[]> {
  const ref = objectRef('endpoints', obj);
  const problems: string[] = [];
  const names = badNames(ref);
  if (names) return unusable(ref, names, problems);

  const sets: EndpointSetInfo[] = [];
  const subsets = asArray(asRecord(obj)?.subsets);
  for (let s = 0; s < subsets.length; s++) {
    const subset = asRecord(subsets[s]);
    if (!subset) {
      problems.push(`${ref.text}: subset #${s} is not an object, dropped`);
      continue;
    }
    const endpoints: EndpointInfo[] = [];
    readAddresses(subset.addresses, true, `subset #${s} addresses`, ref, endpoints, problems);
    readAddresses(subset.notReadyAddresses, false, `subset #${s} notReadyAddresses`, ref, endpoints, problems);
    sets.push({
      namespace: ref.namespace,
      service: ref.name,
      id: `endpoints/${ref.name}/${s}`,
      endpoints: exact(endpoints),
      ports: exact(trimPorts(subset.ports, ref, problems)),
    });
  }
  return { value: sets, problems };
}

function readAddresses(
  raw: unknown,
  ready: boolean,
  what: string,
  ref: ObjectRef,
  out: EndpointInfo[],
  problems: string[],
): void {
  const list = asArray(raw);
  for (let i = 0; i < list.length; i++) {
    const where = `${what} #${i}`;
    const a = asRecord(list[i]);
    const ip = address(a?.ip, 0, where, ref, problems);
    if (ip === null) continue;
    out.push({ addresses: [ip], hostname: hostname(a?.hostname, where, ref, problems), ready });
  }
}
