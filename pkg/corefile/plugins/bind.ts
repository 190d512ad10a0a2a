// `bind ADDR...`: the addresses a block listens on (IP addresses; interface names are not served).

const { isIP } = process.getBuiltinModule('node:net');
import { invalid } from '../args.ts';
import type { Directive } from '../read.ts';

export function bindAddresses(d: Directive): string[] {
  if (d.args.length === 0 || d.block !== null) throw invalid(d, 'needs one or more addresses');
  for (const a of d.args) if (isIP(a) === 0) throw invalid(d, `${JSON.stringify(a)} is not an IP address (interface names are not served)`);
  return d.args;
}
