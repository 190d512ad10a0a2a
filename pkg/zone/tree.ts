// The tree cache: one node per DNS label, walked from the zone apex towards the leaves (names are
// stored with their labels reversed, as in the original kube-dns). A node exists while something
// exists at or below it, which is exactly what separates NODATA from NXDOMAIN (RFC 8020).

import type { RData } from '../dns/message.ts';

export interface ZoneRecord {
  type: number;
  data: RData;
}

/** Records at one name, grouped by the service (or zone feature) that published them. */
export class TreeNode {
  children: Map<string, TreeNode> | null = null;
  /** Most names have exactly one publisher: keep it inline and allocate a map only for the rare shared name. */
  private owner: string | null = null;
  private records: ZoneRecord[] | null = null;
  private others: Map<string, ZoneRecord[]> | null = null;
  /** Permanent nodes (the apex, `svc`, `pod`) survive with nothing below them. */
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
    return this.records === null && this.others === null && (this.children === null || this.children.size === 0);
  }

  add(owner: string, record: ZoneRecord): void {
    if (this.owner === null || this.owner === owner) {
      this.owner = owner;
      (this.records ??= []).push(record);
      return;
    }
    const others = (this.others ??= new Map());
    const list = others.get(owner);
    if (list) list.push(record);
    else others.set(owner, [record]);
  }

  removeOwner(owner: string): void {
    if (this.owner === owner) {
      this.owner = null;
      this.records = null;
      // Promote another publisher into the inline slot.
      const next = this.others?.entries().next();
      if (next && !next.done) {
        this.owner = next.value[0];
        this.records = next.value[1];
        this.others!.delete(next.value[0]);
      }
    } else {
      this.others?.delete(owner);
    }
    if (this.others?.size === 0) this.others = null;
  }

  /** Calls `fn` for every record of `type` (every record when type is undefined). */
  forEach(type: number | undefined, fn: (r: ZoneRecord) => void): void {
    if (this.records) for (const r of this.records) if (type === undefined || r.type === type) fn(r);
    if (this.others) for (const list of this.others.values()) for (const r of list) if (type === undefined || r.type === type) fn(r);
  }

  has(type: number): boolean {
    let found = false;
    this.forEach(type, () => (found = true));
    return found;
  }

  /** The distinct record types present here, in first-seen order. */
  types(): number[] {
    const seen: number[] = [];
    this.forEach(undefined, (r) => {
      if (!seen.includes(r.type)) seen.push(r.type);
    });
    return seen;
  }
}

/** Walks `labels` from the last to the first (i.e. from the apex down). */
export function findNode(root: TreeNode, labels: readonly string[]): TreeNode | undefined {
  let node: TreeNode | undefined = root;
  for (let i = labels.length - 1; i >= 0 && node; i--) node = node.child(labels[i]);
  return node;
}

export function insertRecord(root: TreeNode, labels: readonly string[], owner: string, record: ZoneRecord): void {
  let node = root;
  for (let i = labels.length - 1; i >= 0; i--) node = node.ensureChild(labels[i]);
  node.add(owner, record);
}

/** Removes `owner`'s records at `labels` and prunes nodes left with nothing at or below them. */
export function removeOwner(root: TreeNode, labels: readonly string[], owner: string): void {
  const path: TreeNode[] = [root];
  let node: TreeNode | undefined = root;
  for (let i = labels.length - 1; i >= 0; i--) {
    node = node.child(labels[i]);
    if (!node) return;
    path.push(node);
  }
  node.removeOwner(owner);
  for (let depth = path.length - 1; depth > 0; depth--) {
    const n = path[depth];
    if (!n.isEmpty || n.permanent) break;
    path[depth - 1].children!.delete(labels[labels.length - depth]);
  }
}
