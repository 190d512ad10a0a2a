// A small REST client for kube-apiserver: JSON over HTTPS with our CA and a bearer token. No keep-alive, so
// a restarted API server never meets a stale pooled socket.

import { request as httpsRequest } from 'node:https';

export interface RestReply {
  status: number;
  /** Parsed JSON when the server sent JSON, else the text. */
  body: any;
}

export interface RestTarget {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM of the CA that signed the serving certificate. */
  ca: string;
}

/** One request. PATCH bodies are sent as a JSON merge patch; other bodies as JSON. */
export function restRequest(target: RestTarget, method: string, path: string, token: string, body?: unknown): Promise<RestReply> {
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
  if (payload) {
    headers['content-type'] = method.toUpperCase() === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, target.url), { method, headers, ca: target.ca, agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json')) {
          try {
            parsed = JSON.parse(text);
          } catch {
            // keep the text: a truncated or odd body is still worth showing in a failure
          }
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no reply in 30 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}
