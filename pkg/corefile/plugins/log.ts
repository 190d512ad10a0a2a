// `log [NAMES...] [FORMAT] { class success|denial|error|all... }`: a query log line per reply, as
// CoreDNS's log plugin reads it: no argument logs every name, one argument is a name, more are names
// and, when the last holds a `{`, the format ({common}, {combined}, placeholders). Classes default to all.

import { normalizeDomain } from '../../config/config.ts';
import { ALL_CLASSES } from '../../querylog/querylog.ts';
import type { QueryLogRule } from '../../querylog/querylog.ts';
import { ReplyClass } from '../../querylog/classify.ts';
import { COMMON_LOG_FORMAT, UNSERVED_PLACEHOLDERS } from '../../querylog/format.ts';
import { unserved, written } from '../args.ts';
import { CorefileError } from '../errors.ts';
import type { Directive } from '../read.ts';

const CLASS_BITS: Record<string, number> = { all: ALL_CLASSES, ...ReplyClass };

/** The rules one `log` line makes, in the order written. */
export function logRules(d: Directive): QueryLogRule[] {
  let names = d.args;
  let format = COMMON_LOG_FORMAT;
  if (names.length > 1 && names.at(-1)!.includes('{')) {
    format = names.at(-1)!;
    names = names.slice(0, -1);
  }
  const placeholder = UNSERVED_PLACEHOLDERS.find((p) => format.includes(p));
  if (placeholder !== undefined) throw unserved(d, `the log placeholder ${placeholder}`);
  let classes = 0;
  const invalid = (o: Directive, message: string) => new CorefileError('COREFILE_INVALID', o, `log: ${message}`);
  for (const o of d.block ?? []) {
    if (o.name !== 'class' || o.block !== null) throw invalid(o, `unknown property \`${written(o)}\``);
    if (o.args.length === 0) throw invalid(o, 'class needs at least one of success, denial, error, all');
    for (const c of o.args) {
      if (CLASS_BITS[c] === undefined) throw invalid(o, `${JSON.stringify(c)} is no class (success, denial, error, all)`);
      classes |= CLASS_BITS[c];
    }
  }
  return (names.length === 0 ? ['.'] : names).map((n) => ({ zone: n === '.' ? '' : normalizeDomain(n), format, classes: classes === 0 ? ALL_CLASSES : classes }));
}
