// The control plane the API benchmark runs against: the e2e harness's etcd + kube-apiserver on loopback,
// started outside tap. startCluster only needs a place to register its teardown, so a teardown list stands in
// for the tap Test; close() runs it. Objects are created over one keep-alive agent, a few requests at a time,
// because the harness's own client opens a TLS connection per request.

import { Agent, request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Test } from 'tap';
import { startCluster } from '../test/e2e/harness/cluster.ts';
import type { TestCluster } from '../test/e2e/harness/cluster.ts';

export { binariesAvailable } from '../test/e2e/harness/cluster.ts';

export interface BenchCluster {
  cluster: TestCluster;
  /** POST one object as admin; resolves when the API server has answered (201). */
  create(obj: KubeObject): Promise<void>;
  /** PUT one object over its namesake (no resourceVersion: an unconditional update), as admin. */
  replace(obj: KubeObject): Promise<void>;
  /** POST every object, `concurrency` at a time. */
  createAll(objs: KubeObject[], concurrency?: number, progress?: (done: number) => void): Promise<void>;
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

function collectionPath(o: KubeObject): string {
  const ns = o.metadata.namespace;
  switch (o.kind) {
    case 'Namespace':
      return '/api/v1/namespaces';
    case 'Service':
      return `/api/v1/namespaces/${ns}/services`;
    case 'EndpointSlice':
      return `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    default:
      throw new BenchApiError(`no collection path for kind ${o.kind}`);
  }
}

export async function startBenchCluster(): Promise<BenchCluster> {
  const teardowns: (() => unknown)[] = [];
  const asTest = {
    teardown: (fn: () => unknown) => teardowns.push(fn),
    passing: () => true,
    comment: (...args: unknown[]) => console.log('#', ...args),
  } as unknown as Test;
  const close = async (): Promise<void> => {
    while (teardowns.length) await teardowns.pop()!();
  };
  let cluster: TestCluster;
  try {
    cluster = await startCluster(asTest);
  } catch (err) {
    await close();
    throw err;
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 16, ca: readFileSync(cluster.caFile, 'utf8') });
  teardowns.unshift(() => agent.destroy());

  const send = (method: 'POST' | 'PUT', obj: KubeObject): Promise<void> => {
    const body = Buffer.from(JSON.stringify(obj));
    const path = method === 'POST' ? collectionPath(obj) : `${collectionPath(obj)}/${obj.metadata.name}`;
    const ok = method === 'POST' ? 201 : 200;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, cluster.url), {
        method,
        agent,
        headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json', 'content-length': String(body.length), accept: 'application/json' },
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

  const createAll = async (objs: KubeObject[], concurrency = 8, progress?: (done: number) => void): Promise<void> => {
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < objs.length) {
        await create(objs[next++]);
        if (++done % 2000 === 0) progress?.(done);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };

  return { cluster, create, replace, createAll, close };
}
