// EDNS Client Subnet (RFC 7871) as the server reads and answers it: the request's option as a
// ClientSubnet for the handler, and the OPT record that carries it back with an answer's scope.
// Only answers scoped to the asker carry it (RFC 7871 §7.3: none means valid for every asker).

import { Type } from './constants.ts';
import { formatIPv4, formatIPv6, parseIPv6, writeIPv4 } from './ip.ts';
import { OPTION_ECS } from './question.ts';
import type { OptView } from './question.ts';
import type { ClientSubnet } from './server.ts';

/** The UDP payload size our OPT records advertise (as template.ts's). */
const OUR_UDP_SIZE = 4096;

/** The Client Subnet readOpt found in `req`, or null. */
export function clientSubnetOf(req: Uint8Array, view: OptView): ClientSubnet | null {
  if (view.ecsFamily === 0) return null;
  const bytes = new Uint8Array(16);
  bytes.set(req.subarray(view.ecsAddressAt, view.ecsAddressAt + view.ecsAddressLength));
  const family = view.ecsFamily as 1 | 2;
  return { family, sourcePrefix: view.ecsSourcePrefix, address: family === 1 ? formatIPv4(bytes, 0) : formatIPv6(bytes, 0, false) };
}

/** An OPT record (latin1, as Template.opt) echoing `subnet` with `scope`; `rcode` the full rcode. */
export function clientSubnetOpt(subnet: ClientSubnet, scope: number, rcode: number): string {
  const addressLength = (subnet.sourcePrefix + 7) >>> 3;
  const optionLength = 4 + addressLength;
  const out = Buffer.alloc(11 + 4 + optionLength);
  out.writeUInt16BE(Type.OPT, 1);
  out.writeUInt16BE(OUR_UDP_SIZE, 3);
  out[5] = rcode >>> 4;
  out.writeUInt16BE(4 + optionLength, 9);
  out.writeUInt16BE(OPTION_ECS, 11);
  out.writeUInt16BE(optionLength, 13);
  out.writeUInt16BE(subnet.family, 15);
  out[17] = subnet.sourcePrefix;
  out[18] = Math.min(scope, subnet.family === 1 ? 32 : 128);
  const full = new Uint8Array(16);
  if (subnet.family === 1) writeIPv4(subnet.address, full, 0);
  else parseIPv6(subnet.address, full, 0);
  out.set(full.subarray(0, addressLength), 19);
  return out.toString('latin1');
}
