// Create-or-replace of Kubernetes objects through the REST API, like `kubectl apply` for tests: POST, and on
// 409 AlreadyExists a PUT carrying the current resourceVersion. The resource path of a kind comes from the
// API server's discovery documents, so any built-in kind works without a table of plurals.

import { parseAllDocuments } from 'yaml';
import type { RestReply } from './rest.ts';

export type Send = (method: string, path: string, body?: unknown) => Promise<RestReply>;

export class ApplyError extends Error {
  code = 'E2E_ERR_APPLY';
}

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Objects from YAML (several documents, `kind: List` flattened) or from an array. */
export function toObjects(yamlOrObjects: string | object[]): KubeObject[] {
  const docs: unknown[] = typeof yamlOrObjects === 'string'
    ? parseAllDocuments(yamlOrObjects).map((d) => {
      if (d.errors.length > 0) throw new ApplyError(`invalid YAML: ${d.errors[0].message}`);
      return d.toJS();
    })
    : yamlOrObjects;
  const out: KubeObject[] = [];
  for (const doc of docs) {
    if (doc === null || doc === undefined) continue;
    const o = doc as KubeObject & { items?: unknown[] };
    if (o.kind === 'List' && Array.isArray(o.items)) out.push(...toObjects(o.items as object[]));
    else if (typeof o.apiVersion === 'string' && typeof o.kind === 'string' && typeof o.metadata?.name === 'string') out.push(o);
    else throw new ApplyError(`not a Kubernetes object with apiVersion, kind and metadata.name: ${JSON.stringify(doc).slice(0, 200)}`);
  }
  return out;
}

export class Applier {
  private readonly send: Send;
  private readonly discovery = new Map<string, ApiResource[]>();

  constructor(send: Send) {
    this.send = send;
  }

  async apply(yamlOrObjects: string | object[]): Promise<void> {
    for (const obj of toObjects(yamlOrObjects)) await this.applyOne(obj);
  }

  private async applyOne(obj: KubeObject): Promise<void> {
    const collection = await this.collectionPath(obj);
    const what = `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
    const created = await this.send('POST', collection, obj);
    if (created.status === 201 || created.status === 200) return;
    if (created.status !== 409) throw new ApplyError(`create ${what}: ${created.status} ${message(created)}`);
    const itemPath = `${collection}/${encodeURIComponent(obj.metadata.name)}`;
    // A PUT can lose a race with another writer (409 Conflict): read the resourceVersion again and retry.
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.send('GET', itemPath);
      if (current.status !== 200) throw new ApplyError(`read ${what} for replace: ${current.status} ${message(current)}`);
      const replacement = { ...obj, metadata: { ...obj.metadata, resourceVersion: current.body.metadata.resourceVersion } };
      const replaced = await this.send('PUT', itemPath, replacement);
      if (replaced.status === 200 || replaced.status === 201) return;
      if (replaced.status !== 409) throw new ApplyError(`replace ${what}: ${replaced.status} ${message(replaced)}`);
    }
    throw new ApplyError(`replace ${what}: kept conflicting`);
  }

  private async collectionPath(obj: KubeObject): Promise<string> {
    const gv = obj.apiVersion;
    const base = gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`;
    let resources = this.discovery.get(gv);
    if (!resources) {
      const doc = await this.send('GET', base);
      if (doc.status !== 200) throw new ApplyError(`discovery ${base}: ${doc.status} ${message(doc)}`);
      resources = (doc.body.resources as ApiResource[]).filter((r) => !r.name.includes('/'));
      this.discovery.set(gv, resources);
    }
    const r = resources.find((x) => x.kind === obj.kind);
    if (!r) throw new ApplyError(`kind ${obj.kind} is not served in ${gv}`);
    if (!r.namespaced) return `${base}/${r.name}`;
    const ns = obj.metadata.namespace ?? 'default';
    return `${base}/namespaces/${encodeURIComponent(ns)}/${r.name}`;
  }
}

function message(reply: RestReply): string {
  return typeof reply.body === 'object' && reply.body !== null && 'message' in reply.body ? String(reply.body.message) : String(reply.body).slice(0, 300);
}
