// The /cache view of the tree, in the shape the original served (treecache's JSON):
// {"ChildNodes": {label: node}, "Entries": {key: {"host", "port", "priority", "weight", "ttl"}}},
// starting from the top-level label of the domain ("local" → "cluster" → "svc" → ...).

import { Type, typeName } from '../dns/constants.ts';
import type { AddressData, NameData, SrvData, TxtData } from '../dns/message.ts';
import type { TreeNode, ZoneRecord } from './tree.ts';

interface CacheEntry {
  host?: string;
  port?: number;
  priority?: number;
  weight?: number;
  text?: string;
  ttl: number;
}

interface CacheNode {
  ChildNodes: Record<string, CacheNode>;
  Entries: Record<string, CacheEntry>;
}

function entry(r: ZoneRecord, ttl: number): CacheEntry {
  switch (r.type) {
    case Type.A:
    case Type.AAAA:
      return { host: (r.data as AddressData).address, ttl };
    case Type.SRV: {
      const d = r.data as SrvData;
      return { host: d.target, port: d.port, priority: d.priority, weight: d.weight, ttl };
    }
    case Type.TXT:
      return { text: (r.data as TxtData).texts.join(''), ttl };
    default:
      return { host: (r.data as NameData).target, ttl };
  }
}

function toCacheNode(node: TreeNode, ttl: number): CacheNode {
  const out: CacheNode = { ChildNodes: {}, Entries: {} };
  let n = 0;
  node.forEach(undefined, (r) => {
    out.Entries[`${typeName(r.type).toLowerCase()}-${n++}`] = entry(r, ttl);
  });
  if (node.children) for (const [label, child] of node.children) out.ChildNodes[label] = toCacheNode(child, ttl);
  return out;
}

export function cacheJSON(root: TreeNode, domain: string, ttl: number): CacheNode {
  let top = toCacheNode(root, ttl);
  for (const label of domain.split('.')) top = { ChildNodes: { [label]: top }, Entries: {} };
  return top;
}
