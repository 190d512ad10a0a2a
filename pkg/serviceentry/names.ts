// The names ServiceEntries answer for: exact hosts, and wildcards (`*.example`: every name below
// `example`, not `example` itself). The most specific wins: the exact host, else the wildcard of
// the nearest parent. Several entries for one host answer with all their addresses.

import type { ServiceEntryInfo } from './trim.ts';

export interface ServiceEntryCounts {
  /** Entries answered for. */
  entries: number;
  /** Exact and wildcard hosts. */
  hosts: number;
}

export class ServiceEntryNames {
  /** `namespace/name` → the entry. */
  private readonly entries = new Map<string, ServiceEntryInfo>();
  /** Host (a wildcard as `*.suffix`) → the addresses of every entry naming it, built on change. */
  private hosts = new Map<string, string[]>();

  /** Puts (or, for null, removes) the entry `key`. */
  set(key: string, entry: ServiceEntryInfo | null): void {
    if (entry === null) this.entries.delete(key);
    else this.entries.set(key, entry);
    this.rebuild();
  }

  /** The addresses for `name` (lowercased, no trailing dot); null when no entry names it. */
  lookup(name: string): readonly string[] | null {
    const exact = this.hosts.get(name);
    if (exact !== undefined) return exact;
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
      const wild = this.hosts.get(`*${name.slice(dot)}`);
      if (wild !== undefined) return wild;
    }
    return null;
  }

  counts(): ServiceEntryCounts {
    return { entries: this.entries.size, hosts: this.hosts.size };
  }

  // Entries change rarely and are few: the host table is built again whole.
  private rebuild(): void {
    const hosts = new Map<string, string[]>();
    for (const e of this.entries.values()) {
      for (const h of e.hosts) {
        const list = hosts.get(h) ?? [];
        for (const a of e.addresses) if (!list.includes(a)) list.push(a);
        hosts.set(h, list);
      }
    }
    this.hosts = hosts;
  }
}
