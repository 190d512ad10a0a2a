// Node → NodeTopology: only its zone and region labels (the federation answer's `<zone>.<region>`).
// A node without both labels is of no use to DNS and yields null without a problem: most clusters have
// unlabelled nodes.

import type { KubeObject } from '../source/source.ts';
import type { NodeTopology } from './model.ts';
import { asRecord, isDns1123Subdomain } from './trim-common.ts';
import type { TrimResult } from './trim-common.ts';
import { OBJECT_META } from '../source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../source/kubernetes-protobuf.ts';

const ZONE_LABEL = 'topology.kubernetes.io/zone';
const REGION_LABEL = 'topology.kubernetes.io/region';
/** The labels before Kubernetes 1.17 (the original read only these). */
const OLD_ZONE_LABEL = 'failure-domain.beta.kubernetes.io/zone';
const OLD_REGION_LABEL = 'failure-domain.beta.kubernetes.io/region';

/** What trimNode reads, in protobuf (core/v1 Node: its labels). */
export const NODE_FIELDS: ProtoSchema = { 1: ['metadata', 'message', OBJECT_META] };

export function trimNode(obj: KubeObject): TrimResult<NodeTopology> {
  const labels = asRecord(asRecord(obj.metadata)?.labels) ?? {};
  const pick = (now: string, old: string): string => {
    const v = labels[now] || labels[old];
    return typeof v === 'string' ? v.toLowerCase() : '';
  };
  const zone = pick(ZONE_LABEL, OLD_ZONE_LABEL);
  const region = pick(REGION_LABEL, OLD_REGION_LABEL);
  if (zone === '' || region === '') return { value: null, problems: [] };
  // They become labels of a DNS name; a label value may hold characters a name cannot.
  if (!isDns1123Subdomain(zone) || !isDns1123Subdomain(region)) {
    return { value: null, problems: [`node ${obj.metadata.name}: zone ${JSON.stringify(zone)} / region ${JSON.stringify(region)} cannot be part of a DNS name, ignored`] };
  }
  return { value: { zone, region }, problems: [] };
}
