// The tree cache: one node per DNS label from the zone apex down to the service names (labels are
// walked in reverse, as in the original kube-dns). A node exists while something exists at or below
// it, which is exactly what separates NODATA from NXDOMAIN (RFC 8020). Names below a service are
// answered by its view (service-view.ts), not by nodes of their own.

import type { RData } from '../dns/message.ts';
import type { ServiceView } from './service-view.ts';

/** A record held directly by a node (the apex NS, dns-version TXT). */
export interface ZoneRecord {
  type: number;
  data: RData;
}

export class TreeNode {
  children: Map<string, TreeNode> | null = null;
  records: ZoneRecord[] | null = null;
  view: ServiceView | null = null;
  /** Permanent nodes (the apex, `svc`, `pod`, `dns`) survive with nothing below them. */
  readonly permanent: boolean;

  constructor(permanent = false) {
    this.permanent = permanent;
  }

  child(label: string): TreeNode | undefined {
    return this.children?.get(label);
  }

  ensureChild(label: string, permanent = false): TreeNode {
    let node = this.children?.get(label);
    if (!node) {
      node = new TreeNode(permanent);
      (this.children ??= new Map()).set(label, node);
    }
    return node;
  }

  get isEmpty(): boolean {
    return this.records === null && this.view === null && (this.children === null || this.children.size === 0);
  }
}

/**
 * Walks `labels` (query order) from the apex down as far as the tree goes. Returns the deepest node
 * reached and how many labels (from the front) are left below it.
 */
export function walk(root: TreeNode, labels: readonly string[]): { node: TreeNode; rest: number } {
  let node = root;
  let i = labels.length - 1;
  for (; i >= 0; i--) {
    const next = node.child(labels[i]);
    if (!next) break;
    node = next;
  }
  return { node, rest: i + 1 };
}

export function ensurePath(root: TreeNode, labels: readonly string[]): TreeNode {
  let node = root;
  for (let i = labels.length - 1; i >= 0; i--) node = node.ensureChild(labels[i]);
  return node;
}

/** Clears the view at `labels` and prunes nodes left with nothing at or below them. */
export function removeView(root: TreeNode, labels: readonly string[]): void {
  const path: TreeNode[] = [root];
  let node: TreeNode | undefined = root;
  for (let i = labels.length - 1; i >= 0; i--) {
    node = node.child(labels[i]);
    if (!node) return;
    path.push(node);
  }
  node.view = null;
  for (let depth = path.length - 1; depth > 0; depth--) {
    const n = path[depth];
    if (!n.isEmpty || n.permanent) break;
    path[depth - 1].children!.delete(labels[labels.length - depth]);
  }
}
