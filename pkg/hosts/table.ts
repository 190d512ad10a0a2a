// A hosts table as CoreDNS's hosts plugin reads one: `IP name [aliases...]` lines (hosts(5)), from a
// file re-read when it changes and from lines written in the Corefile; a `*` leftmost label matches
// one label more (never the apex), and gives no PTR. Names are kept canonical (lowercase, no trailing
// dot), addresses canonical (pkg/cluster/ip.ts).

const { readFileSync, statSync } = process.getBuiltinModule('node:fs');
import { canonicalIP, ipFamily } from '../cluster/ip.ts';
import type { Logger } from '../log/log.ts';

export interface HostAddresses {
  v4: string[];
  v6: string[];
}

interface Parsed {
  byName: Map<string, HostAddresses>;
  byAddress: Map<string, string[]>;
}

/** hosts(5) lines into names and addresses; a line that does not read is skipped. */
export function parseHostsLines(lines: readonly string[], into: Parsed = { byName: new Map(), byAddress: new Map() }, reverse = true): Parsed {
  for (const raw of lines) {
    const fields = raw.replace(/#.*$/, '').trim().split(/\s+/).filter(Boolean);
    if (fields.length < 2) continue;
    const ip = canonicalIP(fields[0]);
    if (ip === null) continue;
    for (const n of fields.slice(1)) {
      const name = n.toLowerCase().replace(/\.$/, '');
      const a = into.byName.get(name) ?? { v4: [], v6: [] };
      const list: string[] = ipFamily(ip) === 4 ? a.v4 : a.v6;
      if (!list.includes(ip)) list.push(ip);
      into.byName.set(name, a);
      if (reverse && !name.startsWith('*.')) {
        const names = into.byAddress.get(ip) ?? [];
        if (!names.includes(name)) names.push(name);
        into.byAddress.set(ip, names);
      }
    }
  }
  return into;
}

export interface HostsTableOptions {
  /** The hosts file; null: the inline lines alone. */
  file: string | null;
  /** Lines written in the Corefile's hosts block. */
  inline: readonly string[];
  /** `no_reverse`: no PTR for the addresses. */
  noReverse: boolean;
  /** How often the file is checked for a change (ms); 0: read once. */
  reloadMs: number;
  log: Logger;
}

export class HostsTable {
  /** Name and address pairs held (CoreDNS's coredns_hosts_entries), and when they were last read (ms since the epoch). */
  entries = 0;
  loadedAt = 0;
  private parsed: Parsed = { byName: new Map(), byAddress: new Map() };
  private seen = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly o: HostsTableOptions;

  constructor(o: HostsTableOptions) {
    this.o = o;
    this.load();
    if (o.file !== null && o.reloadMs > 0) {
      this.timer = setInterval(() => this.load(), o.reloadMs);
      this.timer.unref();
    }
  }

  /** The addresses of `qname` (canonical), its wildcard's when it has none; null: the table has no such name. */
  lookup(qname: string): HostAddresses | null {
    const exact = this.parsed.byName.get(qname);
    if (exact !== undefined) return exact;
    const dot = qname.indexOf('.');
    return dot < 0 ? null : (this.parsed.byName.get(`*${qname.slice(dot)}`) ?? null);
  }

  /** The names of an address (canonical); empty: none. */
  names(ip: string): readonly string[] {
    return this.parsed.byAddress.get(ip) ?? [];
  }

  /** The file read ('' for the Corefile's lines alone). */
  get file(): string {
    return this.o.file ?? '';
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Reads the file again when its size or time changed; a file that cannot be read keeps the last table. */
  private load(): void {
    let text = '';
    if (this.o.file !== null) {
      try {
        const st = statSync(this.o.file);
        const seen = `${st.size}:${st.mtimeMs}`;
        if (seen === this.seen) return;
        this.seen = seen;
        text = readFileSync(this.o.file, 'utf8');
      } catch (err) {
        this.o.log.warn('hosts file not read: the last table serves on', { file: this.o.file, err: (err as Error).message });
        return;
      }
    }
    const parsed = parseHostsLines(text.split('\n'), undefined, !this.o.noReverse);
    this.parsed = parseHostsLines(this.o.inline, parsed, !this.o.noReverse);
    this.entries = 0;
    for (const a of this.parsed.byName.values()) this.entries += a.v4.length + a.v6.length;
    this.loadedAt = Date.now();
    this.o.log.info('hosts loaded', { file: this.o.file ?? undefined, names: this.parsed.byName.size });
  }
}
