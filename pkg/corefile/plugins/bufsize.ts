// `bufsize [SIZE]`: the largest UDP reply, whatever the asker's EDNS buffer says; CoreDNS's 1232
// unsaid (what fits an IPv6 packet unfragmented: DNS Flag Day 2020), 512-4096.

import { invalid, wholeNumber } from '../args.ts';
import type { Directive } from '../read.ts';

const BUFSIZE_DEFAULT = 1232;

export function bufsizeOf(d: Directive): number {
  const size = d.args.length === 0 ? BUFSIZE_DEFAULT : wholeNumber(d, d.args[0], 'the size', 0);
  if (d.args.length > 1 || d.block !== null || size < 512 || size > 4096) throw invalid(d, 'takes one size, 512-4096');
  return size;
}
