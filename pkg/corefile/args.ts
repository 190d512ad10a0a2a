// What every plugin's options share: the errors that name a line, whole numbers, durations.

import { parseDuration } from '../flags/flags.ts';
import { CorefileError } from './errors.ts';
import type { Place } from './errors.ts';
import type { Directive } from './read.ts';

export const invalid = (d: Directive, message: string) => new CorefileError('COREFILE_INVALID', d, `${d.name}: ${message}`);

/** An option (or argument) of a served plugin that is not served: refused, never ignored. */
export const unserved = (at: Place, what: string) => new CorefileError('COREFILE_UNSUPPORTED', { file: at.file, line: at.line }, `${what} is not served`);

/** `d` as written, for messages: `max_fails 3`. */
export const written = (d: Directive) => [d.name, ...d.args].join(' ');

/** `d` and its block as written, without where it was: what tells two directives apart. */
export function writtenWhole(d: Directive): string {
  return d.block === null ? written(d) : `${written(d)} { ${d.block.map(writtenWhole).join('; ')} }`;
}

export function noArgs(d: Directive): void {
  if (d.args.length > 0 || d.block !== null) throw invalid(d, 'takes no arguments');
}

export function wholeNumber(d: Directive, text: string, what: string, min: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min) throw invalid(d, `${what} must be a whole number of at least ${min}, not ${JSON.stringify(text)}`);
  return n;
}

/** A Go duration (`5s`, `1m30s`) in ms, at least `minMs`. */
export function duration(d: Directive, text: string, what: string, minMs = 0): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < minMs) throw invalid(d, `${what} must be a duration${minMs > 1 ? ` of at least ${minMs / 1000}s` : minMs > 0 ? ' above 0' : ''} (5s, 1m), not ${JSON.stringify(text)}`);
  return ms;
}
