// One `template` of a Corefile, compiled: what questions it answers and how (CoreDNS's template).

import type { CompiledTemplate } from './go-template.ts';

export interface TemplateRule {
  /** The class and type it answers; 255 (ANY) for every one. */
  qclass: number;
  qtype: number;
  /** Its zones, canonical ('' the root). */
  zones: string[];
  /** Names it answers (the first that matches wins); `.*` unsaid. */
  regex: RegExp[];
  answer: CompiledTemplate[];
  additional: CompiledTemplate[];
  authority: CompiledTemplate[];
  rcode: number;
  /** Zones whose names no regex matches go on to the next template (or plugin); null: none (SERVFAIL). */
  fallthrough: string[] | null;
  /** The directive as written: what tells two plans apart. */
  written: string;
}
