// A loopback TCP proxy in front of the kube-apiserver (TLS passes through untouched), for the failures a
// network throws between kube-dns and its API server: freeze() stalls every connection open now (a NAT
// dropping a flow without a reset), cut() closes them (a partition's resets), block() refuses new ones
// and notes when each was tried. bench:scale-api cuts its servers off with it while writing directly.

import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
}

export class ApiProxy {
  readonly port: number;
  /** performance.now() of every connection refused while blocked. */
  readonly refusedAt: number[] = [];
  private readonly server: Server;
  private readonly live = new Set<Pair>();
  private blocked = false;

  private constructor(server: Server) {
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  /** Listens on a free loopback port, forwarding to 127.0.0.1:`targetPort`. */
  static async start(targetPort: number): Promise<ApiProxy> {
    let proxy: ApiProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    proxy = new ApiProxy(server);
    return proxy;
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.blocked) {
      this.refusedAt.push(performance.now());
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const pair = { client, upstream, frozen: false };
    this.live.add(pair);
    // A frozen pair forwards nothing and propagates no close: the peer sees a silent, open connection.
    client.on('data', (d) => pair.frozen || upstream.write(d));
    upstream.on('data', (d) => pair.frozen || client.write(d));
    const close = (): void => {
      if (pair.frozen) return;
      this.live.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }

  /** Stalls every connection open now; how many. */
  freeze(): number {
    let n = 0;
    for (const p of this.live) if (!p.frozen) {
      p.frozen = true;
      n++;
    }
    return n;
  }

  /** Closes every connection open now, frozen or not. */
  cut(): void {
    for (const p of this.live) {
      p.client.destroy();
      p.upstream.destroy();
    }
    this.live.clear();
  }

  /** Refuses (accepts and closes at once) new connections while on. */
  block(on: boolean): void {
    this.blocked = on;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
