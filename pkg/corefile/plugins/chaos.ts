// `chaos [VERSION] [AUTHORS...]`: what CH TXT questions for version.bind, authors.bind and
// hostname.bind are answered (pkg/chaos). Unsaid, the version is the program's and the authors its own.

import { trim255 } from '../../chaos/chaos.ts';
import type { ChaosAnswers } from '../../chaos/chaos.ts';
import { invalid } from '../args.ts';
import type { Directive } from '../read.ts';

export function chaosOptions(d: Directive, defaults: ChaosAnswers): ChaosAnswers {
  if (d.block !== null) throw invalid(d, `unknown property '${d.block[0]?.name ?? '}'}'`);
  if (d.args.length === 0) return defaults;
  const version = trim255(d.args[0]);
  if (d.args.length === 1) return { version, authors: defaults.authors };
  return { version, authors: [...new Set(d.args.slice(1).map(trim255))].sort() };
}
