// How kube-dns reaches the API server, as the original decides it (cmd/kube-dns): --kubecfg-file and/or
// --kube-master-url (environment variables expanded; it replaces the kubeconfig's server, and alone it
// means no credentials); neither → the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT, its CA,
// its token file re-read every minute). Tokens, token files, client certificates, basic auth and CAs
// are read by kubernetes-credentials.ts; @kubernetes/client-node is loaded only for exec and
// auth-provider users (it costs ~38 MB RSS). Requests go through node:http(s), so a list page or a
// watch line is parsed once, as plain JSON, without client-node's model classes.

import { http, https } from '../httpserver/node-http.ts';
import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import { anonymousCredentials, inClusterCredentials, kubeconfigCredentials } from './kubernetes-credentials.ts';
import type { Credentials } from './kubernetes-credentials.ts';

export interface KubeConnectionOptions {
  kubeconfig?: string;
  /** The kubeconfig's context to use instead of its current one (a Corefile's `kubeconfig FILE CONTEXT`). */
  context?: string;
  masterUrl?: string;
  /** The environment (for $VAR expansion and the in-cluster variables). Default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface KubeClient {
  /** The API server's URL. */
  readonly server: string;
  /** Who we are, for the start log line: never a secret. */
  readonly identity: string;
  /** GET a path (with query), asking for `accept` (JSON unless given); resolves with the response once its headers arrived. */
  get(path: string, signal: AbortSignal, accept?: string): Promise<IncomingMessage>;
}

export class KubeConnectionError extends Error {
  readonly code = 'SOURCE_ERR_KUBE_CONNECTION';
  constructor(message: string) {
    super(message);
    this.name = 'KubeConnectionError';
  }
}

/** Go's os.ExpandEnv: $VAR and ${VAR}; unset variables become empty. */
export function expandEnv(s: string, env: NodeJS.ProcessEnv): string {
  return s.replace(/\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced: string | undefined, bare: string | undefined) => env[braced ?? bare ?? ''] ?? '');
}

interface ClusterLike {
  name: string;
  server: string;
  skipTLSVerify: boolean;
  caFile?: string;
  caData?: string;
  [k: string]: unknown;
}
interface UserLike {
  name: string;
  token?: string;
  username?: string;
  certFile?: string;
  certData?: string;
  authProvider?: { name?: string; config?: Record<string, string> };
  exec?: { command?: string };
  [k: string]: unknown;
}

/** Only exec and auth-provider users come this way. */
function describeUser(u: UserLike | null): string {
  if (u?.exec) return `exec plugin ${u.exec.command ?? '?'} of kubeconfig user "${u.name}"`;
  return `auth provider ${u?.authProvider?.name ?? '?'} of kubeconfig user "${u?.name ?? ''}"`;
}

function parseMasterUrl(raw: string, env: NodeJS.ProcessEnv): string {
  const masterUrl = expandEnv(raw, env);
  let u: URL;
  try {
    u = new URL(masterUrl);
  } catch {
    throw new KubeConnectionError(`--kube-master-url ${JSON.stringify(masterUrl)} is not a URL`);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || !u.host) throw new KubeConnectionError(`--kube-master-url ${JSON.stringify(masterUrl)} needs an http(s) scheme and a host`);
  return masterUrl.replace(/\/+$/, '');
}

/** Requests through node:http(s) with whatever `authorize` adds (TLS options, Authorization). */
function httpClient(server: string, identity: string, authorize: (opts: RequestOptions) => void | Promise<void>): KubeClient {
  const transport = server.startsWith('https:') ? https() : http;
  return {
    server,
    identity,
    async get(path, signal, accept = 'application/json') {
      const opts: RequestOptions = { method: 'GET', headers: { Accept: accept, 'User-Agent': 'kube-dns-ts' }, signal };
      // Per request: token files are re-read, exec credentials refreshed.
      await authorize(opts);
      return new Promise<IncomingMessage>((resolve, reject) => {
        const req = transport.request(`${server}${path}`, opts, resolve);
        req.on('error', reject);
        req.end();
      });
    },
  };
}

export async function connectKube(o: KubeConnectionOptions): Promise<KubeClient> {
  const env = o.env ?? process.env;
  const masterUrl = o.masterUrl ? parseMasterUrl(o.masterUrl, env) : '';
  let creds: Credentials | null;
  try {
    if (o.kubeconfig) creds = kubeconfigCredentials(o.kubeconfig, masterUrl, o.context);
    else if (masterUrl) creds = anonymousCredentials(masterUrl);
    else if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) {
      throw new KubeConnectionError('not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset): give --kubecfg-file, --kube-master-url or --cluster-file');
    } else creds = inClusterCredentials(env);
  } catch (e) {
    if (e instanceof KubeConnectionError) throw e;
    throw new KubeConnectionError(`cannot load ${o.kubeconfig ? `kubeconfig ${o.kubeconfig}` : 'the connection settings'}: ${(e as Error).message}`);
  }
  if (creds) return httpClient(creds.server, creds.identity, (opts) => creds.apply(opts));
  return clientNodeClient(o.kubeconfig!, masterUrl, o.context);
}

/** Exec and auth-provider users: client-node runs the plugin and refreshes its credentials. */
async function clientNodeClient(kubeconfig: string, masterUrl: string, context: string | undefined): Promise<KubeClient> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(kubeconfig);
    if (context !== undefined) kc.setCurrentContext(context);
  } catch (e) {
    throw new KubeConnectionError(`cannot load kubeconfig ${kubeconfig}: ${(e as Error).message}`);
  }
  const current = kc.getCurrentCluster() as ClusterLike | null;
  if (!current) throw new KubeConnectionError(`kubeconfig ${kubeconfig} has no current context with a cluster`);
  const server = (masterUrl || current.server).replace(/\/+$/, '');
  // client-node refuses plain http unless skipTLSVerify is set; for http that flag means nothing.
  const cluster: ClusterLike = { ...current, server, skipTLSVerify: current.skipTLSVerify || server.startsWith('http:') };
  kc.loadFromOptions({
    clusters: kc.getClusters().map((c) => (c.name === cluster.name ? cluster : c)),
    users: kc.getUsers(),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  return httpClient(server, describeUser(kc.getCurrentUser() as UserLike | null), (opts) => kc.applyToHTTPSOptions(opts));
}
