// A rejected configuration. The message names the ConfigMap key and the offending entry, because it
// is what an operator reads in the log after `kubectl edit configmap kube-dns`.

export type ConfigErrorCode = 'CONFIG_JSON' | 'CONFIG_INVALID';

export class ConfigError extends Error {
  readonly code: ConfigErrorCode;
  /** The ConfigMap key (file name) at fault: "stubDomains", "upstreamNameservers", "federations", ... */
  readonly key: string;
  /** The offending entry as written ('' when the whole value is at fault). */
  readonly entry: string;

  constructor(code: ConfigErrorCode, key: string, entry: string, message: string) {
    super(message);
    this.name = 'ConfigError';
    this.code = code;
    this.key = key;
    this.entry = entry;
  }
}
