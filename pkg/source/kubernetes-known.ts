// What the API source remembers per object: its key and resourceVersion, nothing else (the store keeps
// the trimmed object). Enough to turn watch events into add/update/delete and to diff a relist against
// what was delivered before, so the store converges after a 410 or a reconnect: objects deleted while
// we were away get delete events, changed ones updates, new ones adds.

import type { KubeObject, RelistHooks } from './source.ts';

export type Change = 'add' | 'update' | 'delete';

export function objectKey(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** The identity-only object a delete carries when we no longer have the object (a relist tombstone). */
export function tombstone(key: string): KubeObject {
  const slash = key.indexOf('/');
  const namespace = key.slice(0, slash);
  return { metadata: namespace ? { name: key.slice(slash + 1), namespace } : { name: key.slice(slash + 1) } };
}

/** What the reflector remembers per object: versions (KnownObjects) or nothing (ForgetfulObjects). */
export interface Known {
  readonly size: number;
  watched(type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject): Change | null;
  relist(): { item(o: KubeObject): Change | null; finish(): KubeObject[] };
}

export class KnownObjects implements Known {
  private readonly versions = new Map<string, string>();

  get size(): number {
    return this.versions.size;
  }

  /** A watch event: ADDED/MODIFIED → add or update (null when this version was seen), DELETED → delete. */
  watched(type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject): Change | null {
    const key = objectKey(o);
    if (type === 'DELETED') return this.versions.delete(key) ? 'delete' : null;
    return this.put(key, o);
  }

  /** Starts a relist; feed it every listed object, then finish() for the deletes. */
  relist(): Relist {
    return new Relist(this.versions, (key, o) => this.put(key, o));
  }

  private put(key: string, o: KubeObject): Change | null {
    const rv = o.metadata.resourceVersion ?? '';
    const before = this.versions.get(key);
    this.versions.set(key, rv);
    if (before === undefined) return 'add';
    return before === rv && rv !== '' ? null : 'update';
  }
}

export class Relist {
  private readonly seen = new Set<string>();
  private readonly versions: Map<string, string>;
  private readonly put: (key: string, o: KubeObject) => Change | null;

  constructor(versions: Map<string, string>, put: (key: string, o: KubeObject) => Change | null) {
    this.versions = versions;
    this.put = put;
  }

  /** One listed object: add, update, or null when unchanged. */
  item(o: KubeObject): Change | null {
    const key = objectKey(o);
    this.seen.add(key);
    return this.put(key, o);
  }

  /** The list is complete: forgets what it did not contain and returns their tombstones. */
  finish(): KubeObject[] {
    const gone: KubeObject[] = [];
    for (const key of this.versions.keys()) {
      if (this.seen.has(key)) continue;
      this.versions.delete(key);
      gone.push(tombstone(key));
    }
    this.seen.clear();
    return gone;
  }
}

/**
 * Remembers nothing per object (a kind with `forgetful` hooks): every event is passed on as it is,
 * every listed object is an add, and the kind's relisting()/relisted() replace the diff. `size` is the
 * count of the last list.
 */
export class ForgetfulObjects implements Known {
  size = 0;
  private readonly hooks: RelistHooks;

  constructor(hooks: RelistHooks) {
    this.hooks = hooks;
  }

  watched(type: 'ADDED' | 'MODIFIED' | 'DELETED'): Change {
    return type === 'ADDED' ? 'add' : type === 'MODIFIED' ? 'update' : 'delete';
  }

  relist(): { item(o: KubeObject): Change; finish(): KubeObject[] } {
    let listed = 0;
    this.hooks.relisting();
    return {
      item: () => {
        listed++;
        return 'add';
      },
      finish: () => {
        this.size = listed;
        this.hooks.relisted();
        return [];
      },
    };
  }
}
