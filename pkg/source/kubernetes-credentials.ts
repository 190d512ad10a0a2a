// Credentials for the common cases, without @kubernetes/client-node: a kubeconfig whose user has a
// token, a token file, a client certificate or basic auth (and a cluster CA), the in-cluster service
// account, or a bare --kube-master-url. Loading client-node's KubeConfig pulls in its whole generated
// API (measured: +38 MB RSS on an idle kube-dns, a quarter of the memory budget), so it is kept for
// what only it does: exec and auth-provider (OIDC, cloud) users.

const { readFileSync } = process.getBuiltinModule('node:fs');
import { dirname, isAbsolute, join } from 'node:path';
import type { RequestOptions } from 'node:https';

export interface Credentials {
  server: string;
  /** Who we are, for the start log line: never a secret. */
  identity: string;
  /** Adds TLS settings and authentication to a request's options. */
  apply(opts: RequestOptions): void;
}

/**
 * A kubeconfig's text. JSON (`kubectl config view -o json`, and what many tools write) is YAML too, and
 * is read without the YAML parser; yaml is loaded only for the rest (an in-cluster kube-dns never needs
 * it: ~20 ms of a start). Broken JSON goes to the YAML parser, which says where it broke.
 */
function parseKubeconfig(text: string): unknown {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {
      // YAML's flow mappings start with { too
    }
  }
  const { createRequire } = process.getBuiltinModule('node:module');
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}

/** Where a pod's service account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** client-go and client-node re-read token files about once a minute (projected tokens rotate). */
const TOKEN_FILE_TTL_MS = 60_000;

type Dict = Record<string, unknown>;
const dict = (v: unknown): Dict => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Dict) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A token read from a file, cached for a minute. */
function tokenFile(path: string): () => string {
  let token = '';
  let readAt = -Infinity;
  return () => {
    if (Date.now() - readAt > TOKEN_FILE_TTL_MS) {
      token = readFileSync(path, 'utf8').trim();
      readAt = Date.now();
    }
    return token;
  };
}

function named(list: unknown, name: string | undefined, field: string): Dict | null {
  if (!Array.isArray(list)) return null;
  const entry = list.map(dict).find((e) => e.name === name);
  return entry ? dict(entry[field]) : null;
}

function fileOrData(base: string, file: unknown, data: unknown): Buffer | undefined {
  const d = str(data);
  if (d) return Buffer.from(d, 'base64');
  const f = str(file);
  return f ? readFileSync(isAbsolute(f) ? f : join(base, f)) : undefined;
}

function credentials(server: string, identity: string, tls: RequestOptions, authorization: (() => string) | null): Credentials {
  return {
    server,
    identity,
    apply(opts) {
      Object.assign(opts, tls);
      const auth = authorization?.();
      if (auth) opts.headers = { ...(opts.headers as Dict), Authorization: auth };
    },
  };
}

/**
 * Reads a kubeconfig's context: `contextName`, else its current one. Returns null when its user needs
 * client-node (exec, auth-provider); `masterUrl` replaces the cluster's server.
 */
export function kubeconfigCredentials(path: string, masterUrl: string, contextName?: string): Credentials | null {
  const cfg = dict(parseKubeconfig(readFileSync(path, 'utf8')));
  const base = dirname(path);
  const wanted = contextName ?? str(cfg['current-context']);
  const context = named(cfg.contexts, wanted, 'context');
  if (!context) throw new Error(`no ${contextName === undefined ? 'current ' : ''}context ${JSON.stringify(wanted ?? '')}`);
  const cluster = named(cfg.clusters, str(context.cluster), 'cluster');
  if (!cluster) throw new Error(`context names cluster ${JSON.stringify(context.cluster ?? '')}, which is not defined`);
  const userName = str(context.user);
  const user = named(cfg.users, userName, 'user') ?? {};
  if (user.exec || user['auth-provider']) return null;
  const server = (masterUrl || str(cluster.server) || '').replace(/\/+$/, '');
  if (!server) throw new Error('the current cluster has no server');
  const tls: RequestOptions = {
    ca: fileOrData(base, cluster['certificate-authority'], cluster['certificate-authority-data']),
    cert: fileOrData(base, user['client-certificate'], user['client-certificate-data']),
    key: fileOrData(base, user['client-key'], user['client-key-data']),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    servername: str(cluster['tls-server-name']),
  };
  const who = `kubeconfig user "${userName ?? ''}"`;
  const token = str(user.token);
  const file = str(user.tokenFile);
  if (token) return credentials(server, `bearer token of ${who}`, tls, () => `Bearer ${token}`);
  if (file) {
    const read = tokenFile(isAbsolute(file) ? file : join(base, file));
    return credentials(server, `token file ${file} of ${who}`, tls, () => `Bearer ${read()}`);
  }
  if (tls.cert) return credentials(server, `client certificate of ${who}`, tls, null);
  const username = str(user.username);
  if (username) {
    const basic = `Basic ${Buffer.from(`${username}:${str(user.password) ?? ''}`).toString('base64')}`;
    return credentials(server, `basic auth user "${username}"`, tls, () => basic);
  }
  return credentials(server, 'anonymous (no credentials)', tls, null);
}

/** The pod's service account: KUBERNETES_SERVICE_HOST/PORT, its CA, its token file re-read each minute. */
export function inClusterCredentials(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): Credentials {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT}`;
  const read = tokenFile(join(dir, 'token'));
  return credentials(server, `service account token file ${join(dir, 'token')} (re-read every minute)`, { ca: readFileSync(join(dir, 'ca.crt')) }, () => `Bearer ${read()}`);
}

/** --kube-master-url alone: no credentials, as the original. */
export function anonymousCredentials(server: string): Credentials {
  return credentials(server, 'anonymous (no credentials)', {}, null);
}
