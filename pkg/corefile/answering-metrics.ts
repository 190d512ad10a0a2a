// CoreDNS's metrics of the answering plugins: hosts (entries, last reload) and template (matches).
// One per program, registered once (register()); the plugins of whichever plan answers now report into it, so a
// reload's new plugins count on in the same series.

import type { Registry } from '../metrics/registry.ts';
import type { HostsTable } from '../hosts/table.ts';
import { mirroredCounter, mirroredGauge } from '../metrics/mirror.ts';
import type { TemplateMatched } from '../template/handler.ts';

export class AnsweringMetrics {
  /** The hosts tables answering now. */
  private readonly tables = new Set<HostsTable>();
  /** `server zone class type` (NUL between) → templates matched. */
  private readonly matches = new Map<string, number>();

  /** Exports the series in `registry` (once). */
  register(registry: Registry): void {
    mirroredGauge(registry, { name: 'coredns_hosts_entries', help: 'The combined number of entries in hosts and Corefile.', labelNames: ['hostsfile'] }, () => [...this.tables].map((t) => [{ hostsfile: t.file }, t.entries] as const));
    mirroredGauge(registry, { name: 'coredns_hosts_reload_timestamp_seconds', help: 'The timestamp of the last reload of hosts file.' }, () => {
      let last = 0;
      for (const t of this.tables) last = Math.max(last, t.loadedAt);
      return [[{}, last / 1000]];
    });
    mirroredCounter(registry, { name: 'coredns_template_matches_total', help: 'Counter of template regex matches.', labelNames: ['server', 'zone', 'view', 'class', 'type'] }, () =>
      [...this.matches].map(([key, n]) => {
        const [server, zone, qclass, qtype] = key.split('\0');
        return [{ server, zone, view: '', class: qclass, type: qtype }, n] as const;
      }),
    );
  }

  /** `table` answers until its plugin is closed (the returned function). */
  hosts(table: HostsTable): () => void {
    this.tables.add(table);
    return () => this.tables.delete(table);
  }

  /** A template's matches in the block served as `server` (CoreDNS's `dns://addr:port`). */
  templateMatched(server: string): TemplateMatched {
    return (zone, qclass, qtype) => {
      const key = `${server}\0${zone}\0${qclass}\0${qtype}`;
      this.matches.set(key, (this.matches.get(key) ?? 0) + 1);
    };
  }
}
