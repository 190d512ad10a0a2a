// The HTTP endpoints a Corefile names: `prometheus [ADDR]`, `health [ADDR] { lameduck D }`. One
// address each for the process, as CoreDNS serves one endpoint per address.

import { duration, invalid, unserved, written } from '../args.ts';
import type { Directive } from '../read.ts';

/** The endpoint's address (`fallback` when none is written); a second, different one is refused. */
export function endpointAddress(d: Directive, current: string | null, fallback: string): string {
  if (d.args.length > 1) throw invalid(d, 'takes at most one address');
  const address = d.args[0] ?? fallback;
  if (!/^(\[[^\]]*\]|[^:]*):\d+$/.test(address)) throw invalid(d, `${JSON.stringify(address)} is not host:port`);
  if (current !== null && current !== address) throw unserved(d, `a second ${d.name} address (${address}; ${current} is already served)`);
  return address;
}

/** `prometheus [ADDR]` (default `localhost:9153`). */
export function prometheusAddress(d: Directive, current: string | null): string {
  if (d.block !== null) throw unserved(d, 'a prometheus block');
  return endpointAddress(d, current, 'localhost:9153');
}

/** `health [ADDR] { lameduck D }` (default `:8080`, no lame duck). */
export function healthOptions(d: Directive, current: string | null): { address: string; lameDuckMs: number } {
  const h = { address: endpointAddress(d, current, ':8080'), lameDuckMs: 0 };
  for (const o of d.block ?? []) {
    if (o.name !== 'lameduck' || o.args.length !== 1 || o.block !== null) throw unserved(o, `health option \`${written(o)}\``);
    h.lameDuckMs = duration(o, o.args[0], 'lameduck');
  }
  return h;
}
