// The kube-dns ConfigMap model, its validation, and where it comes from (ConfigSync: the --config-dir
// poller, the ConfigMap through the API, the defaults): the public surface of
// pkg/config, shared by kube-dns and dnsmasq-nanny.

export { emptyConfig } from './model.ts';
export type { KubeDnsConfig } from './model.ts';
export { parseConfig, parseFederations, MAX_UPSTREAM_NAMESERVERS } from './parse.ts';
export { parseUpstream, parseStubServer } from './upstream.ts';
export type { HostPort } from './upstream.ts';
export { configVersion } from './version.ts';
export { ConfigDirWatcher, readConfigDir, readConfigFiles, decodeConfigFiles } from './dir.ts';
export type { ConfigDirStats } from './dir.ts';
export { ConfigMapSync, FixedConfig } from './sync.ts';
export type { ConfigChangeHandler, ConfigSync } from './sync.ts';
export { ConfigError } from './errors.ts';
export type { ConfigErrorCode } from './errors.ts';
export { isDns1123Label, isDns1123Subdomain, normalizeDomain } from './names.ts';
