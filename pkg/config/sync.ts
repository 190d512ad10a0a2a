// Where the kube-dns configuration comes from, behind one interface (kubernetes/dns's config.Sync):
// the ConfigMap mounted as a directory (ConfigDirWatcher, dir.ts), the ConfigMap read through the
// API (ConfigMapSync), or nothing but the defaults (FixedConfig). The programs start one and act on
// what it announces.

const { createHash } = process.getBuiltinModule('node:crypto');
import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import { ConfigError } from './errors.ts';
import { emptyConfig } from './model.ts';
import type { KubeDnsConfig } from './model.ts';
import { parseConfig } from './parse.ts';

/** A new accepted version: its configuration, and a version string ('' for the defaults). */
export type ConfigChangeHandler = (config: KubeDnsConfig, version: string) => void;

export interface ConfigSync {
  /**
   * Starts; `onChange` runs for each accepted new version (for one known now, before start()
   * returns). The defaults are not announced: a program applies current() once it has started.
   */
  start(onChange: ConfigChangeHandler): void;
  stop(): void;
  /** The configuration in force: the defaults until a version is accepted. */
  current(): KubeDnsConfig;
  /** Versions rejected as invalid so far (each counted and logged once; the previous one stays). */
  readonly invalidUpdates: number;
  /** Where it comes from, for logs: `--config-dir /etc/kube-dns`, `ConfigMap kube-system/kube-dns`, `defaults`. */
  describe(): string;
}

/** The defaults, and no change ever (no ConfigMap configured). */
export class FixedConfig implements ConfigSync {
  readonly invalidUpdates = 0;
  private readonly what: string;
  private readonly config = emptyConfig();

  constructor(what: string) {
    this.what = what;
  }

  start(): void {}

  stop(): void {}

  current(): KubeDnsConfig {
    return this.config;
  }

  describe(): string {
    return this.what;
  }
}

/**
 * The ConfigMap read through the API: the program's source delivers its events to update(); the
 * same data again is no new version, a deleted ConfigMap is the defaults.
 */
export class ConfigMapSync implements ConfigSync {
  readonly namespace: string;
  readonly name: string;
  private readonly log: Logger;
  private onChange: ConfigChangeHandler | null = null;
  private config = emptyConfig();
  private seen = '';
  private invalid = 0;

  constructor(namespace: string, name: string, log?: Logger) {
    this.namespace = namespace;
    this.name = name;
    this.log = log ?? createLogger('config');
  }

  get invalidUpdates(): number {
    return this.invalid;
  }

  describe(): string {
    return `ConfigMap ${this.namespace}/${this.name}`;
  }

  start(onChange: ConfigChangeHandler): void {
    this.onChange = onChange;
  }

  stop(): void {
    this.onChange = null;
  }

  current(): KubeDnsConfig {
    return this.config;
  }

  /** A ConfigMap event: its data, or null when it was deleted. Another ConfigMap's is ignored. */
  update(namespace: string, name: string, data: Readonly<Record<string, string>> | null): void {
    if (namespace !== this.namespace || name !== this.name || this.onChange === null) return;
    const version = data === null || Object.keys(data).length === 0 ? '' : dataVersion(data);
    if (version === this.seen) return;
    this.seen = version;
    let config: KubeDnsConfig;
    try {
      config = data === null ? emptyConfig() : parseConfig(data);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.invalid++;
      this.log.warn('invalid configuration, ignoring update', { configMap: `${namespace}/${name}`, key: err.key, entry: err.entry || undefined, err: err.message });
      return;
    }
    this.config = config;
    this.onChange(config, version);
  }
}

/** A digest of the data, whatever the order of its keys. */
function dataVersion(data: Readonly<Record<string, string>>): string {
  const h = createHash('sha256');
  for (const key of Object.keys(data).sort()) h.update(`${key}\0${data[key]}\0`);
  return h.digest('hex');
}
