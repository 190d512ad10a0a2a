// The /cache view of the tree, in the shape the original served (treecache's JSON):
// {"ChildNodes": {label: node}, "Entries": {key: {"host", "port", "priority", "weight", "ttl"}}},
// starting from the top-level label of the domain ("local" → "cluster" → "svc" → ...).

import { Type, typeName } from '../dns/constants.ts';
import type { NameData, TxtData } from '../dns/message.ts';
import type { ServiceView } from './service-view.ts';
import type { TreeNode } from './tree.ts';

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

const emptyNode = (): CacheNode => ({ ChildNodes: {}, Entries: {} });

function hostsEntries(ips: readonly string[], ttl: number): Record<string, CacheEntry> {
  return Object.fromEntries(ips.map((ip, i) => [`address-${i}`, { host: ip, ttl }]));
}

function viewNode(view: ServiceView, out: CacheNode, ttl: number): void {
  if (view.cname !== null) out.Entries['cname-0'] = { host: view.cname, ttl };
  if (view.hosts === null) Object.assign(out.Entries, hostsEntries(view.addresses, ttl));
  else for (const host of view.hosts) out.ChildNodes[host.name] = { ChildNodes: {}, Entries: hostsEntries(host.ips, ttl) };
  for (const s of view.srv) {
    const proto = (out.ChildNodes[s.protoLabel] ??= emptyNode());
    const port = (proto.ChildNodes[s.portLabel] ??= emptyNode());
    const targets = s.hosts === null ? [view.fqdn] : s.hosts.map((h) => `${h}.${view.fqdn}`);
    for (const target of targets) port.Entries[`srv-${Object.keys(port.Entries).length}`] = { host: target, port: s.port, priority: 10, ttl };
  }
}

function toCacheNode(node: TreeNode, ttl: number): CacheNode {
  const out = emptyNode();
  for (const [i, r] of (node.records ?? []).entries()) {
    const key = `${typeName(r.type).toLowerCase()}-${i}`;
    out.Entries[key] = r.type === Type.TXT ? { text: (r.data as TxtData).texts.join(''), ttl } : { host: (r.data as NameData).target, ttl };
  }
  if (node.view) viewNode(node.view, out, ttl);
  if (node.children) for (const [label, child] of node.children) out.ChildNodes[label] = toCacheNode(child, ttl);
  return out;
}

export function cacheJSON(root: TreeNode, domain: string, ttl: number): CacheNode {
  let top = toCacheNode(root, ttl);
  for (const label of domain.split('.')) top = { ChildNodes: { [label]: top }, Entries: {} };
  return top;
}
