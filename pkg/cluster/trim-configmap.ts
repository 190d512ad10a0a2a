// ConfigMap → ConfigMapInfo: the data as given (pkg/config parses and validates the kube-dns keys).

import type { KubeObject } from '../source/source.ts';
import type { ConfigMapInfo } from './model.ts';
import { asRecord, isDns1123Label, isDns1123Subdomain, objectRef, unusable } from './trim-common.ts';
import type { TrimResult } from './trim-common.ts';
import { OBJECT_META } from '../source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../source/kubernetes-protobuf.ts';

/** What trimConfigMap reads, in protobuf (core/v1 ConfigMap). */
export const CONFIG_MAP_FIELDS: ProtoSchema = { 1: ['metadata', 'message', OBJECT_META], 2: ['data', 'map'] };

export function trimConfigMap(obj: KubeObject): TrimResult<ConfigMapInfo> {
  const ref = objectRef('configmap', obj);
  const problems: string[] = [];
  if (!isDns1123Label(ref.namespace)) {
    return unusable(ref, `namespace ${JSON.stringify(ref.namespace)} is not a DNS-1123 label`, problems);
  }
  if (!isDns1123Subdomain(ref.name)) {
    return unusable(ref, ref.name === '' ? 'metadata.name is missing' : 'name is not a DNS-1123 subdomain', problems);
  }
  const raw = asRecord(obj)?.data;
  const data: Record<string, string> = {};
  const entries = asRecord(raw);
  if (entries) {
    for (const [key, v] of Object.entries(entries)) {
      // The API only stores strings; a hand-written file may hold a number or a mapping by mistake.
      if (typeof v === 'string') data[key] = v;
      else problems.push(`${ref.text}: data key ${JSON.stringify(key)} is not a string, dropped`);
    }
  } else if (raw !== undefined && raw !== null) {
    problems.push(`${ref.text}: data is not a mapping, ignored`);
  }
  return { value: { namespace: ref.namespace, name: ref.name, data }, problems };
}
