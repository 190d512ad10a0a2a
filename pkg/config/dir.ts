// --config-dir: the ConfigMap mounted as a volume, one file per key. The kubelet publishes it as
// `<key> -> ..data/<key>` symlinks and swaps `..data` atomically, so we follow symlinks, skip dot-names,
// and ignore subdirectories. A missing directory is an empty config (the manifest mounts it optional).
//
// Reads are synchronous: a handful of small files every --config-period costs microseconds, and it
// keeps "read, hash, parse, publish" one uninterrupted step.

const { readdirSync, readFileSync, statSync } = process.getBuiltinModule('node:fs');
import { join } from 'node:path';
import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import { ConfigError } from './errors.ts';
import { emptyConfig } from './model.ts';
import type { KubeDnsConfig } from './model.ts';
import { parseConfig } from './parse.ts';
import { configVersion } from './version.ts';
import type { ConfigChangeHandler, ConfigSync } from './sync.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/** The directory's top-level files (symlinks followed) by name; a missing directory has none. */
export function readConfigFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return files;
    throw err;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      let target;
      try {
        target = statSync(path);
      } catch (err) {
        if (errorCode(err) === 'ENOENT') continue; // dangling link: not a file
        throw err;
      }
      if (!target.isFile()) continue;
    } else if (!entry.isFile()) {
      continue;
    }
    files.set(entry.name, readFileSync(path));
  }
  return files;
}

/** Files as text, as parseConfig takes them. Throws ConfigError for a file that is not UTF-8. */
export function decodeConfigFiles(files: ReadonlyMap<string, Uint8Array>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [name, bytes] of files) {
    try {
      data[name] = utf8.decode(bytes);
    } catch {
      throw new ConfigError('CONFIG_INVALID', name, '', `${name}: the file is not valid UTF-8`);
    }
  }
  return data;
}

/** One-shot read of a config directory. Throws ConfigError for invalid content, or the fs error. */
export function readConfigDir(dir: string): { config: KubeDnsConfig; version: string } {
  const files = readConfigFiles(dir);
  return { config: parseConfig(decodeConfigFiles(files)), version: configVersion(files) };
}

export interface ConfigDirStats {
  /** Directory reads. */
  polls: number;
  /** Accepted new versions (onChange calls). */
  updates: number;
  /** New versions rejected as invalid (each counted and logged once). */
  invalidUpdates: number;
  /** Reads that failed with a filesystem error (the previous config stays). */
  readErrors: number;
}

export class ConfigDirWatcher implements ConfigSync {
  readonly dir: string;
  readonly periodMs: number;
  readonly stats: ConfigDirStats = { polls: 0, updates: 0, invalidUpdates: 0, readErrors: 0 };
  private onChange: ConfigChangeHandler = () => {};
  private readonly log: Logger;
  private config: KubeDnsConfig = emptyConfig();
  private acceptedVersion = '';
  /** The last version looked at, valid or not: an invalid version is reported once, not every poll. */
  private seenVersion = '';
  private lastReadError = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(dir: string, periodMs: number, log?: Logger) {
    if (!(periodMs > 0)) throw new RangeError(`config poll period must be positive, got ${periodMs}`);
    this.dir = dir;
    this.periodMs = periodMs;
    this.log = log ?? createLogger('config-dir');
  }

  describe(): string {
    return `--config-dir ${this.dir}`;
  }

  get invalidUpdates(): number {
    return this.stats.invalidUpdates;
  }

  /**
   * Reads the directory once right away (so current() is meaningful on return, and onChange has
   * already fired for a non-empty initial config), then every periodMs until stop().
   */
  start(onChange: ConfigChangeHandler): void {
    if (this.timer !== undefined) return;
    this.onChange = onChange;
    this.timer = setInterval(() => this.poll(), this.periodMs);
    this.poll();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  current(): KubeDnsConfig {
    return this.config;
  }

  /** The version of current() ('' for the defaults). */
  version(): string {
    return this.acceptedVersion;
  }

  /** One poll; start() calls this on its timer. */
  poll(): void {
    this.stats.polls++;
    let files: Map<string, Buffer>;
    try {
      files = this.readWithRetry();
    } catch (err) {
      this.stats.readErrors++;
      const message = (err as Error).message;
      if (message !== this.lastReadError) {
        this.log.warn('cannot read the config directory, keeping the previous config', { dir: this.dir, err: message });
        this.lastReadError = message;
      }
      return;
    }
    this.lastReadError = '';
    const version = configVersion(files);
    if (version === this.seenVersion) return;
    this.seenVersion = version;

    let config: KubeDnsConfig;
    try {
      config = parseConfig(decodeConfigFiles(files));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.stats.invalidUpdates++;
      this.log.warn('invalid configuration, ignoring update', {
        dir: this.dir,
        key: err.key,
        entry: err.entry || undefined,
        err: err.message,
      });
      return;
    }
    this.config = config;
    this.acceptedVersion = version;
    this.stats.updates++;
    this.log.info('configuration updated', {
      dir: this.dir,
      version: version.slice(0, 12) || 'defaults',
      stubDomains: config.stubDomains.size,
      upstreamNameservers: config.upstreamNameservers.length,
      federations: config.federations.size,
    });
    try {
      this.onChange(config, version);
    } catch (err) {
      this.log.error('config change handler failed', { err });
    }
  }

  // The kubelet swaps `..data` between our readdir and our reads; one more try sees the new set.
  private readWithRetry(): Map<string, Buffer> {
    try {
      return readConfigFiles(this.dir);
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err;
      return readConfigFiles(this.dir);
    }
  }
}
