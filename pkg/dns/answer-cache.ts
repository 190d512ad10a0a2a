// Pre-encoded answers keyed by the lowercased question bytes. A generation number lets a
// handler that started before invalidate() avoid storing what it computed from old data.

import { LRUCache } from 'lru-cache';
import type { Template } from './template.ts';

export class AnswerCache {
  private readonly lru: LRUCache<string, Template> | null;
  /** Bumped by clear(); compare before storing an answer computed asynchronously. */
  generation = 0;

  constructor(max: number) {
    this.lru = max > 0 ? new LRUCache<string, Template>({ max }) : null;
  }

  get(key: string): Template | undefined {
    return this.lru?.get(key);
  }

  set(key: string, t: Template, generation: number): void {
    if (generation === this.generation) this.lru?.set(key, t);
  }

  clear(): void {
    this.generation++;
    this.lru?.clear();
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }
}
