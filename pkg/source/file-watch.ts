// Notices when a file's content changes, however it changes: written in place, replaced by a rename
// (editors), or swapped under a symlink (ConfigMap volumes flip `..data`). Two ways in, one way out:
// fs.watch on the directory for speed, and a stat poll as the fallback for what inotify misses (network
// filesystems, a directory that does not exist yet, symlinks pointing elsewhere). Both only schedule a
// debounced read; the read delivers the text when it differs from the last text delivered.

const { createHash } = process.getBuiltinModule('node:crypto');
const { watch } = process.getBuiltinModule('node:fs');
import type { FSWatcher } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export interface FileWatchOptions {
  pollIntervalMs: number;
  /** Quiet time after the last event before reading (editors write in bursts). */
  debounceMs?: number;
  /** Read at the latest this long after the first event of a burst, even if events keep coming. */
  maxWaitMs?: number;
  /** New content (also the first content read). Called synchronously from the read. */
  onContent(text: string): void;
  /** The file cannot be read (once per stretch of failures). */
  onUnreadable(err: NodeJS.ErrnoException): void;
  /** Something unexpected inside the loop (a throwing onContent); the watch keeps going. */
  onError(err: unknown): void;
}

// File timestamps come from a coarse kernel clock (a few ms), so a second write of the same size right
// after a read can keep mtime, size and inode equal. Like git's "racily clean" check, a file modified
// this close to our read is read again on the next poll.
const RACY_MS = 1000;

export class FileWatch {
  readonly path: string;
  private readonly dir: string;
  private readonly base: string;
  private readonly opts: FileWatchOptions;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private watcher: FSWatcher | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private debounceTimer: NodeJS.Timeout | null = null;
  private burstStart = 0;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private polling = false;
  private stopped = false;
  /** ino:size:mtime of what was read last; null while the file is unreadable. */
  private signature: string | null = null;
  private racy = false;
  /** SHA-1 of the text delivered last: the text itself is not kept (a large cluster file is megabytes). */
  private lastDigest: string | null = null;
  private unreadable = false;

  constructor(path: string, opts: FileWatchOptions) {
    this.path = path;
    this.dir = dirname(path);
    this.base = basename(path);
    this.opts = opts;
    this.debounceMs = opts.debounceMs ?? 50;
    this.maxWaitMs = opts.maxWaitMs ?? 500;
  }

  /** Reads once (delivering the content if there is any), then starts watching. */
  async start(): Promise<void> {
    await this.read();
    this.watchDir();
    this.pollTimer = setInterval(() => void this.poll(), this.opts.pollIntervalMs);
    this.pollTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.pollTimer = this.debounceTimer = null;
    this.watcher?.close();
    this.watcher = null;
    while (this.reading) await this.reading;
  }

  private watchDir(): void {
    if (this.watcher || this.stopped) return;
    try {
      const w = watch(this.dir, { persistent: false }, (_event, name) => {
        // Our file, or the `..data` / `..<timestamp>` entries of a ConfigMap volume swap.
        if (name === null || name === this.base || name.startsWith('..')) this.schedule();
      });
      w.on('error', () => {
        // The directory went away: drop the watcher; the poll sets it up again when it is back.
        w.close();
        if (this.watcher === w) this.watcher = null;
        this.schedule();
      });
      this.watcher = w;
    } catch {
      // No directory yet: the poll keeps trying.
    }
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      if (!this.watcher) this.watchDir();
      let sig: string | null = null;
      try {
        const st = await stat(this.path, { bigint: true });
        sig = `${st.ino}:${st.size}:${st.mtimeNs}`;
      } catch {
        sig = null;
      }
      if (sig !== this.signature || (sig !== null && this.racy) || (sig === null && !this.unreadable)) {
        this.schedule();
      }
    } finally {
      this.polling = false;
    }
  }

  /** Reads after a quiet debounceMs, but no later than maxWaitMs after the burst began. */
  private schedule(): void {
    if (this.stopped) return;
    const now = Date.now();
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    else this.burstStart = now;
    const delay = Math.max(0, Math.min(this.debounceMs, this.burstStart + this.maxWaitMs - now));
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = null;
      void this.read();
    }, delay);
    this.debounceTimer.unref();
  }

  /** One read at a time; a read asked for during another runs right after it. */
  private read(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.readOnce().finally(() => {
      this.reading = null;
      if (this.readAgain && !this.stopped) {
        this.readAgain = false;
        void this.read();
      }
    });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    let text: string;
    try {
      // fstat and read through one descriptor, so the signature belongs to the text we read.
      const fh = await open(this.path, 'r');
      try {
        const st = await fh.stat({ bigint: true });
        text = await fh.readFile('utf8');
        this.signature = `${st.ino}:${st.size}:${st.mtimeNs}`;
        this.racy = Date.now() - Number(st.mtimeMs) < RACY_MS;
      } finally {
        await fh.close();
      }
    } catch (e) {
      this.signature = null;
      if (!this.unreadable && !this.stopped) {
        this.unreadable = true;
        this.opts.onUnreadable(e as NodeJS.ErrnoException);
      }
      return;
    }
    this.unreadable = false;
    // `>` and most editors truncate and then write: a just-modified file that turned empty is most
    // likely half written. Wait for it to settle (the racy re-reads) rather than wipe what is served.
    if (this.racy && this.lastDigest !== null && text.trim() === '') return;
    const digest = createHash('sha1').update(text).digest('base64');
    if (this.stopped || digest === this.lastDigest) return;
    this.lastDigest = digest;
    try {
      this.opts.onContent(text);
    } catch (e) {
      this.opts.onError(e);
    }
  }
}
