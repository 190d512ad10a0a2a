// The upstream DNS client: the public surface of pkg/forward.

export { Forwarder } from './forwarder.ts';
export type { ForwarderOptions, ForwarderStats, ForwardPolicy } from './forwarder.ts';
export type { HealthOptions } from './health.ts';
export { serverKey } from './servers.ts';
export type { ReplyStats, ServerStats } from './servers.ts';
export { ForwardError } from './errors.ts';
export type { ForwardErrorCode } from './errors.ts';
export { resolvConfNameservers, normalizeUpstream, formatUpstream } from './upstream.ts';
export type { Upstream } from './upstream.ts';
