// The control plane the API benchmark runs against: the e2e harness's etcd + kube-apiserver on loopback,
// started outside tap. startCluster only needs a place to register its teardown, so a teardown list stands in
// for the tap Test; close() runs it. Objects are created over one keep-alive agent, a few requests at a time,
// because the harness's own client opens a TLS connection per request.

import { Agent, request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { benchScope } from './report.ts';
import { startCluster } from '../test/e2e/harness/cluster.ts';
import type { TestCluster } from '../test/e2e/harness/cluster.ts';

export { binariesAvailable } from '../test/e2e/harness/cluster.ts';

export interface BenchCluster {
  cluster: TestCluster;
  /** POST one object as admin; resolves when the API server has answered (201). */
  create(obj: KubeObject): Promise<void>;
  /** PUT one object over its namesake (no resourceVersion: an unconditional update), as admin. */
  replace(obj: KubeObject): Promise<void>;
  /** POST every object, `concurrency` at a time; `then` runs after each create (e.g. a status update). */
  createAll(objs: KubeObject[], concurrency?: number, progress?: (done: number) => void, then?: (obj: KubeObject) => Promise<void>): Promise<void>;
  /** PATCH (merge) an object's status subresource, as the kubelet reports a pod's address. */
  patchStatus(obj: KubeObject, status: object): Promise<void>;
  /** PATCH (merge) an object's annotations: a write every watcher of its kind is sent, that no DNS answer reads. */
  annotate(obj: KubeObject, annotations: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}

export class BenchApiError extends Error {
  code = 'BENCH_ERR_API';
}

/** Where each kind's objects live: its API prefix and resource, and whether it is namespaced. */
const RESOURCES: Record<string, { prefix: string; plural: string; namespaced: boolean }> = {
  Namespace: { prefix: '/api/v1', plural: 'namespaces', namespaced: false },
  Node: { prefix: '/api/v1', plural: 'nodes', namespaced: false },
  Service: { prefix: '/api/v1', plural: 'services', namespaced: true },
  Pod: { prefix: '/api/v1', plural: 'pods', namespaced: true },
  EndpointSlice: { prefix: '/apis/discovery.k8s.io/v1', plural: 'endpointslices', namespaced: true },
};

function resourceOf(kind: string): { prefix: string; plural: string; namespaced: boolean } {
  const r = RESOURCES[kind];
  if (r === undefined) throw new BenchApiError(`no collection path for kind ${kind}`);
  return r;
}

function collectionPath(o: KubeObject): string {
  const r = resourceOf(o.kind);
  return r.namespaced ? `${r.prefix}/namespaces/${o.metadata.namespace}/${r.plural}` : `${r.prefix}/${r.plural}`;
}

/** Every object of a kind, in all namespaces: where its lists and watches go. */
export function listPath(kind: string): string {
  const r = resourceOf(kind);
  return `${r.prefix}/${r.plural}`;
}

export async function startBenchCluster(): Promise<BenchCluster> {
  const { t: asTest, close } = benchScope();
  let cluster: TestCluster;
  try {
    cluster = await startCluster(asTest);
  } catch (err) {
    await close();
    throw err;
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 16, ca: readFileSync(cluster.caFile, 'utf8') });
  asTest.teardown(() => agent.destroy());

  const send = (method: 'POST' | 'PUT' | 'PATCH', obj: KubeObject, patch?: object, subresource = ''): Promise<void> => {
    const body = Buffer.from(JSON.stringify(patch ?? obj));
    const path = method === 'POST' ? collectionPath(obj) : `${collectionPath(obj)}/${obj.metadata.name}${subresource}`;
    const ok = method === 'POST' ? 201 : 200;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, cluster.url), {
        method,
        agent,
        headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', 'content-length': String(body.length), accept: 'application/json' },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode === ok) resolve();
          else reject(new BenchApiError(`${method} ${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  };
  const create = (obj: KubeObject): Promise<void> => send('POST', obj);
  const replace = (obj: KubeObject): Promise<void> => send('PUT', obj);

  const patchStatus = (obj: KubeObject, status: object): Promise<void> => send('PATCH', obj, { status }, '/status');
  const annotate = (obj: KubeObject, annotations: Record<string, string>): Promise<void> => send('PATCH', obj, { metadata: { annotations } });
  const createAll = async (objs: KubeObject[], concurrency = 8, progress?: (done: number) => void, then?: (obj: KubeObject) => Promise<void>): Promise<void> => {
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < objs.length) {
        const obj = objs[next++];
        await create(obj);
        await then?.(obj);
        if (++done % 2000 === 0) progress?.(done);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };

  return { cluster, create, replace, createAll, patchStatus, annotate, close };
}
