// Requests and replies between threads over a worker's message port: a request resolves with what
// the other side's handler for its type returned (or rejects with its error); a notification expects
// nothing back; `once` waits for a one-way message of the other side's (`listening`).

interface Port {
  postMessage(value: unknown): void;
  on(event: 'message', listener: (m: Envelope) => void): unknown;
}

interface Envelope {
  type?: string;
  payload?: unknown;
  /** A request's number; absent: a notification. */
  id?: number;
  /** The number of the request this answers. */
  reply?: number;
  value?: unknown;
  error?: string;
}

export type ThreadHandlers = Record<string, (payload: unknown) => unknown>;

export class ThreadChannel {
  private readonly port: Port;
  private readonly handlers: ThreadHandlers;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly waiting = new Map<string, ((payload: unknown) => void)[]>();
  private nextId = 1;

  constructor(port: Port, handlers: ThreadHandlers) {
    this.port = port;
    this.handlers = handlers;
    port.on('message', (m) => this.receive(m));
  }

  request(type: string, payload?: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ type, payload, id } satisfies Envelope);
    });
  }

  notify(type: string, payload?: unknown): void {
    this.port.postMessage({ type, payload } satisfies Envelope);
  }

  once(type: string, listener: (payload: unknown) => void): void {
    this.waiting.set(type, [...(this.waiting.get(type) ?? []), listener]);
  }

  private receive(m: Envelope): void {
    if (m.reply !== undefined) return this.settle(m);
    const handler = m.type === undefined ? undefined : this.handlers[m.type];
    if (handler === undefined) {
      const listeners = this.waiting.get(m.type ?? '') ?? [];
      this.waiting.delete(m.type ?? '');
      for (const l of listeners) l(m.payload);
      return;
    }
    const done = Promise.resolve().then(() => handler(m.payload));
    if (m.id === undefined) return void done.catch(() => undefined);
    done.then(
      (value) => this.port.postMessage({ reply: m.id, value } satisfies Envelope),
      (err: Error) => this.port.postMessage({ reply: m.id, error: err?.message ?? String(err) } satisfies Envelope),
    );
  }

  private settle(m: Envelope): void {
    const p = this.pending.get(m.reply!);
    this.pending.delete(m.reply!);
    if (m.error !== undefined) p?.reject(new Error(m.error));
    else p?.resolve(m.value);
  }
}
