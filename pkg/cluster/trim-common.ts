// What every trimmer shares: the result shape, name rules, and readers that take any value (objects
// come from files and the API and are not trusted to have the shape their kind promises).

import { isDns1123Label } from '../dns/dns1123.ts';
import type { PortInfo, Protocol } from './model.ts';

export { isDns1123Label, isDns1123Subdomain } from '../dns/dns1123.ts';

/** A trimmed object: `value` null when the object is unusable; `problems` says why or what was dropped. */
export interface TrimResult<T> {
  value: T | null;
  problems: string[];
}

export const DEFAULT_NAMESPACE = 'default';

export function asRecord(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** `"kind ns/name"`, the prefix of every problem about one object. */
export interface ObjectRef {
  kind: string;
  namespace: string;
  name: string;
  text: string;
}

/** Reads metadata.namespace (default "default") and metadata.name of any value, for problem messages. */
export function objectRef(kind: string, obj: unknown): ObjectRef {
  const meta = asRecord(asRecord(obj)?.metadata);
  const ns = meta?.namespace;
  const namespace = ns === undefined || ns === null || ns === '' ? DEFAULT_NAMESPACE : String(ns);
  const name = typeof meta?.name === 'string' ? meta.name : '';
  return { kind, namespace, name, text: `${kind} ${namespace}/${name || '<no name>'}` };
}

/** The usual "unusable" result. */
export function unusable<T>(ref: ObjectRef, why: string, problems: string[] = []): TrimResult<T> {
  problems.push(`${ref.text}: ${why}`);
  return { value: null, problems };
}

/** Checks namespace and name are DNS-1123 labels; returns the reason if not. */
export function badNames(ref: ObjectRef): string | null {
  if (!isDns1123Label(ref.namespace)) return `namespace ${JSON.stringify(ref.namespace)} is not a DNS-1123 label`;
  if (ref.name === '') return 'metadata.name is missing';
  if (!isDns1123Label(ref.name)) return `name ${JSON.stringify(ref.name)} is not a DNS-1123 label`;
  return null;
}

const PROTOCOLS: ReadonlySet<string> = new Set<Protocol>(['TCP', 'UDP', 'SCTP']);

/**
 * Trims a ports array (Service spec.ports, EndpointSlice ports, Endpoints subset ports): name '' or a
 * DNS-1123 label, port 1-65535, protocol TCP/UDP/SCTP (default TCP, any case). Bad entries are dropped
 * and reported. With `nullPortMeansAll` (EndpointSlice, where a null port means "all ports") an entry
 * without a port is dropped silently: it is valid, it just gives no SRV record.
 */
export function trimPorts(raw: unknown, ref: ObjectRef, problems: string[], nullPortMeansAll = false): PortInfo[] {
  const out: PortInfo[] = [];
  const list = asArray(raw);
  for (let i = 0; i < list.length; i++) {
    const p = asRecord(list[i]);
    if (!p) {
      problems.push(`${ref.text}: port #${i} is not an object, dropped`);
      continue;
    }
    const name = p.name ?? '';
    const label = `port #${i}${typeof name === 'string' && name !== '' ? ` (${name})` : ''}`;
    if (name !== '' && !isDns1123Label(name)) {
      problems.push(`${ref.text}: ${label} name ${JSON.stringify(name)} is not a DNS-1123 label, dropped`);
      continue;
    }
    const port = p.port;
    if (nullPortMeansAll && (port === undefined || port === null)) continue;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
      const shown = port === undefined || port === null ? 'missing' : JSON.stringify(port);
      problems.push(`${ref.text}: ${label} port ${shown} is not 1-65535, dropped`);
      continue;
    }
    const proto = p.protocol === undefined || p.protocol === null ? 'TCP' : String(p.protocol).toUpperCase();
    if (!PROTOCOLS.has(proto)) {
      problems.push(`${ref.text}: ${label} protocol ${JSON.stringify(p.protocol)} is not TCP, UDP or SCTP, dropped`);
      continue;
    }
    out.push({ name: name as string, port, protocol: proto as Protocol });
  }
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) {
    problems.push(`${ref.text}: ports is not a list, ignored`);
  }
  return out;
}

/**
 * A copy of `list` whose backing store is exactly its length. V8 gives an array grown by push() at
 * least 17 slots; the store keeps these arrays for the life of the object (tens of thousands of
 * endpoints), so they are copied to size once, here.
 */
export function exact<T>(list: T[]): T[] {
  return list.slice();
}
