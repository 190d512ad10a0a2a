// A server block key: `zone[:port]` or `dns://zone[:port]` (CoreDNS's other transports are not served).

import { normalizeDomain } from '../config/config.ts';
import { CorefileError } from './errors.ts';
import type { Place } from './errors.ts';

export interface ZoneKey {
  /** Lowercase, no trailing dot; '' is the root. */
  zone: string;
  port: number;
}

/** The zone and port of `key`; a key without a port gets `defaultPort` (-dns.port). */
export function zoneKey(key: string, at: Place, defaultPort: number): ZoneKey {
  const m = /^(?:dns:\/\/)?([^:/]*)(?::(\d+))?$/.exec(key);
  if (m === null || m[1] === '') throw new CorefileError('COREFILE_UNSUPPORTED', at, `server block key ${JSON.stringify(key)}: only dns:// zones with a port are served`);
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (!(port >= 0 && port <= 65535)) throw new CorefileError('COREFILE_INVALID', at, `server block key ${JSON.stringify(key)}: port must be 0-65535`);
  return { zone: m[1] === '.' ? '' : normalizeDomain(m[1]), port };
}
