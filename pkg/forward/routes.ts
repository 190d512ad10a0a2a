// Which upstreams a name goes to: the longest stub domain that is a suffix of the name (on label
// boundaries), else the default upstreams. An excepted domain (a Corefile forward's `except`) is a
// route of no servers: its names are not forwarded, unless a longer stub domain holds them.

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

/** The route of an excepted domain: no server. */
const EXCEPTED: readonly never[] = Object.freeze([]);

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

  /**
   * Domains are matched case-insensitively, with or without a trailing dot. Empty lists are ignored;
   * `excepted` domains get no server (a stub domain of the same name wins).
   */
  setStubs(stubs: ReadonlyMap<string, readonly S[]>, excepted: readonly string[] = []): void {
    const next = new Map<string, readonly S[]>();
    for (const domain of excepted) next.set(canonical(domain), EXCEPTED);
    for (const [domain, servers] of stubs) if (servers.length > 0) next.set(canonical(domain), servers);
    this.stubs = next;
  }

  /** Whether `servers` (from serversFor) is an excepted domain's route. */
  isExcepted(servers: readonly S[]): boolean {
    return servers === EXCEPTED;
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
