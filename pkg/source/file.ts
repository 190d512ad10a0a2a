// The cluster-file source: a YAML/JSON file of Kubernetes objects stands in for the API server (local
// runs, tests, clusters without API access). Each good load is diffed against the previous one and the
// differences go to the sink as add/update/delete events; a bad load changes nothing.

import { resolve } from 'node:path';
import { createLogger } from '../log/log.ts';
import type { Logger } from '../log/log.ts';
import { ClusterFileError, parseClusterFile } from './file-parse.ts';
import type { ClusterObject } from './file-parse.ts';
import { FileWatch } from './file-watch.ts';
import type { Source, SourceSink } from './source.ts';

export interface FileSourceOptions {
  /** The kinds to read (pkg/cluster's table); objects of other kinds are skipped. */
  kinds: readonly string[];
  log?: Logger;
  /** How often the file is stat()ed in case fs.watch missed a change. Default 250. */
  pollIntervalMs?: number;
}

export interface FileSourceStats {
  /** Loads that parsed (the first, and every change after it). */
  loads: number;
  /** Changes that were rejected as malformed (the previous state was kept). */
  rejectedLoads: number;
  /** Objects currently held (of the kinds read). */
  objects: number;
}

export class FileSourceStartedError extends Error {
  readonly code = 'SOURCE_ERR_STARTED';
  constructor(path: string) {
    super(`cluster file source for ${path} was already started`);
    this.name = 'FileSourceStartedError';
  }
}

export class FileSource implements Source {
  readonly path: string;
  readonly stats: FileSourceStats = { loads: 0, rejectedLoads: 0, objects: 0 };
  private readonly log: Logger;
  private readonly pollIntervalMs: number;
  private sink: SourceSink | null = null;
  private fileWatch: FileWatch | null = null;
  private readonly kinds: readonly string[];
  private current = new Map<string, ClusterObject>();
  private synced = false;

  constructor(path: string, opts: FileSourceOptions) {
    this.kinds = opts.kinds;
    this.path = resolve(path);
    this.log = opts.log ?? createLogger('file-source');
    this.pollIntervalMs = opts.pollIntervalMs ?? 250;
  }

  describe(): string {
    return `cluster file ${this.path}`;
  }

  /** Loads the file once (if it is there and good, the sink is synced before this resolves), then watches it. */
  async start(sink: SourceSink): Promise<void> {
    if (this.sink) throw new FileSourceStartedError(this.path);
    this.sink = sink;
    this.fileWatch = new FileWatch(this.path, {
      pollIntervalMs: this.pollIntervalMs,
      onContent: (text) => this.load(text),
      onUnreadable: (err) => {
        const state = this.synced ? 'keeping the last good state' : 'not synced yet';
        this.log.error(`cluster file unreadable, ${state}; retrying`, { path: this.path, err: err.message });
      },
      onError: (err) => this.log.error('cluster file update failed', { path: this.path, err }),
    });
    await this.fileWatch.start();
  }

  async stop(): Promise<void> {
    await this.fileWatch?.stop();
    this.fileWatch = null;
  }

  private load(text: string): void {
    let parsed;
    try {
      parsed = parseClusterFile(text, this.kinds);
    } catch (e) {
      this.stats.rejectedLoads++;
      if (e instanceof ClusterFileError) {
        this.log.error('cluster file rejected, keeping the last good state', {
          path: this.path,
          line: e.line,
          col: e.col,
          err: e.reason,
        });
      } else {
        this.log.error('cluster file rejected, keeping the last good state', { path: this.path, err: e });
      }
      return;
    }
    for (const key of parsed.duplicates) this.log.warn('object appears twice, the later one wins', { key });
    for (const what of parsed.ignored) this.log.debug(2, 'ignoring object of a kind DNS does not read', { object: what });

    const sink = this.sink!;
    const next = new Map<string, ClusterObject>();
    let added = 0;
    let updated = 0;
    let deleted = 0;
    for (const o of parsed.objects) {
      // Keep only what a later diff needs: the digest and the object's identity, not the whole object.
      next.set(o.key, { kind: o.kind, key: o.key, digest: o.digest, object: { metadata: { name: o.object.metadata.name, namespace: o.object.metadata.namespace } } });
      const before = this.current.get(o.key);
      if (!before) {
        added++;
        sink.event({ type: 'add', kind: o.kind, object: o.object });
      } else if (before.digest !== o.digest) {
        updated++;
        sink.event({ type: 'update', kind: o.kind, object: o.object });
      }
    }
    for (const [key, before] of this.current) {
      if (next.has(key)) continue;
      deleted++;
      sink.event({ type: 'delete', kind: before.kind, object: before.object });
    }
    this.current = next;
    this.stats.loads++;
    this.stats.objects = next.size;
    this.log.info('loaded cluster file', { path: this.path, objects: next.size, added, updated, deleted });
    if (added + updated + deleted > 0 || !this.synced) sink.flush();
    if (!this.synced) {
      this.synced = true;
      sink.synced();
    }
  }
}
