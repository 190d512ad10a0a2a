// Which upstreams a name goes to: the longest stub domain that is a suffix of the name (on label
// boundaries), else the default upstreams.

import type { Upstream } from './upstream.ts';

function canonical(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') && !lower.endsWith('\\.') ? lower.slice(0, -1) : lower;
}

/** The index just past the first label's separating dot, or -1 for the last label. Skips "\." escapes. */
function nextLabel(name: string, from: number): number {
  for (let i = from; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x5c) i++; // "\x": the escaped character is part of the label
    else if (c === 0x2e) return i + 1;
  }
  return -1;
}

export class Routes<S extends Upstream = Upstream> {
  private defaults: readonly S[] = [];
  private stubs = new Map<string, readonly S[]>();

  /** The default route's list itself (callers compare identity to tell the default route apart). */
  get defaultRoute(): readonly S[] {
    return this.defaults;
  }

  setDefault(servers: readonly S[]): void {
    this.defaults = servers;
  }

  /** Domains are matched case-insensitively, with or without a trailing dot. Empty lists are ignored. */
  setStubs(stubs: ReadonlyMap<string, readonly S[]>): void {
    const next = new Map<string, readonly S[]>();
    for (const [domain, servers] of stubs) if (servers.length > 0) next.set(canonical(domain), servers);
    this.stubs = next;
  }

  serversFor(qname: string): readonly S[] {
    if (this.stubs.size === 0) return this.defaults;
    const name = canonical(qname);
    for (let at = 0; at >= 0; at = nextLabel(name, at)) {
      const servers = this.stubs.get(at === 0 ? name : name.slice(at));
      if (servers !== undefined) return servers;
    }
    return this.defaults;
  }
}
