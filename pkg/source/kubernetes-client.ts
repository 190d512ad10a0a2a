// How kube-dns reaches the API server, as the original decides it (cmd/kube-dns): --kubecfg-file and/or
// --kube-master-url (environment variables expanded; it replaces the kubeconfig's server, and alone it
// means no credentials); neither → the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT, its CA,
// its token file re-read every minute). @kubernetes/client-node resolves credentials (tokens, client
// certificates, exec and OIDC plugins) and TLS; the requests themselves go through node:http(s), so a
// list page or a watch line is parsed once, as plain JSON, without client-node's model classes.
// client-node is imported only here and only when the API source starts (it costs ~60 MB RSS).

import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface KubeConnectionOptions {
  kubeconfig?: string;
  masterUrl?: string;
  /** The environment (for $VAR expansion and the in-cluster variables). Default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface KubeClient {
  /** The API server's URL. */
  readonly server: string;
  /** Who we are, for the start log line: never a secret. */
  readonly identity: string;
  /** GET a path (with query); resolves with the response once its headers arrived. */
  get(path: string, signal: AbortSignal): Promise<IncomingMessage>;
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

function describeUser(u: UserLike | null, inCluster: boolean): string {
  if (!u || (!u.token && !u.username && !u.certFile && !u.certData && !u.authProvider && !u.exec)) return inCluster ? 'none' : 'anonymous (no credentials)';
  if (u.authProvider?.config?.tokenFile) return `service account token file ${u.authProvider.config.tokenFile} (re-read every minute)`;
  if (u.token) return `bearer token of kubeconfig user "${u.name}"`;
  if (u.certFile || u.certData) return `client certificate of kubeconfig user "${u.name}"`;
  if (u.username) return `basic auth user "${u.username}"`;
  if (u.exec) return `exec plugin ${u.exec.command ?? '?'} of kubeconfig user "${u.name}"`;
  return `auth provider ${u.authProvider?.name ?? '?'} of kubeconfig user "${u.name}"`;
}

export async function connectKube(o: KubeConnectionOptions): Promise<KubeClient> {
  const env = o.env ?? process.env;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  let inCluster = false;
  let masterUrl = '';
  if (o.masterUrl) {
    masterUrl = expandEnv(o.masterUrl, env);
    let u: URL;
    try {
      u = new URL(masterUrl);
    } catch {
      throw new KubeConnectionError(`--kube-master-url ${JSON.stringify(masterUrl)} is not a URL`);
    }
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || !u.host) throw new KubeConnectionError(`--kube-master-url ${JSON.stringify(masterUrl)} needs an http(s) scheme and a host`);
    masterUrl = masterUrl.replace(/\/+$/, '');
  }
  try {
    if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
    else if (masterUrl) kc.loadFromClusterAndUser({ name: 'master', server: masterUrl, skipTLSVerify: false }, { name: 'anonymous' });
    else {
      if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) {
        throw new KubeConnectionError('not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset): give --kubecfg-file, --kube-master-url or --cluster-file');
      }
      inCluster = true;
      kc.loadFromCluster();
    }
  } catch (e) {
    if (e instanceof KubeConnectionError) throw e;
    throw new KubeConnectionError(`cannot load ${o.kubeconfig ? `kubeconfig ${o.kubeconfig}` : 'the connection settings'}: ${(e as Error).message}`);
  }
  const current = kc.getCurrentCluster() as ClusterLike | null;
  if (!current) throw new KubeConnectionError(`kubeconfig ${o.kubeconfig} has no current context with a cluster`);
  const server = (masterUrl || current.server).replace(/\/+$/, '');
  // client-node refuses plain http unless skipTLSVerify is set; for http that flag means nothing.
  const cluster: ClusterLike = { ...current, server, skipTLSVerify: current.skipTLSVerify || server.startsWith('http:') };
  kc.loadFromOptions({
    clusters: kc.getClusters().map((c) => (c.name === cluster.name ? cluster : c)),
    users: kc.getUsers(),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  const identity = describeUser(kc.getCurrentUser() as UserLike | null, inCluster);
  const transport = server.startsWith('https:') ? https : http;

  return {
    server,
    identity,
    async get(path, signal) {
      const opts: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json', 'User-Agent': 'kube-dns-ts' }, signal };
      // Re-applied per request: the token file is re-read, exec credentials refreshed.
      await kc.applyToHTTPSOptions(opts);
      return new Promise<IncomingMessage>((resolve, reject) => {
        const req = transport.request(`${server}${path}`, opts, resolve);
        req.on('error', reject);
        req.end();
      });
    },
  };
}
