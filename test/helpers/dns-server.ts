// For the pkg/dns server tests: a DnsServer on 127.0.0.1 that t.teardown closes, and queries built
// with our own encoder where a test needs fields dig cannot set (opcode, QR, extra sections).

import type { Test } from 'tap';
import { DnsServer } from '../../pkg/dns/server.ts';
import type { DnsServerOptions } from '../../pkg/dns/server.ts';
import { encodeMessage } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message } from '../../pkg/dns/message.ts';

export async function startServer(t: Test, opts: Omit<DnsServerOptions, 'address' | 'port'>): Promise<{ server: DnsServer; port: number }> {
  const server = new DnsServer({ address: '127.0.0.1', port: 0, ...opts });
  t.teardown(() => server.close(0));
  const { port } = await server.listen();
  return { server, port };
}

/** A recursive IN query for `name`; `edit` changes the message before it is encoded. */
export function query(name: string, type: number, id: number, edit?: (m: Message) => void): Buffer {
  const m = emptyMessage(id);
  m.rd = true;
  m.questions.push({ name, type, class: 1 });
  edit?.(m);
  return encodeMessage(m).bytes;
}
