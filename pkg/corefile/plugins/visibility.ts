// `visibility { ... }`: which namespaces' names a namespace's pods may resolve (pkg/visibility), the
// kube-dns ConfigMap's `visibility` key written as a Corefile block. Ours, no CoreDNS plugin:
//
//   visibility {
//       allow NAMESPACE SEEN...       # NAMESPACE's pods also see the names of SEEN ("*": every namespace)
//       shared NAMESPACE[/SERVICE]... # seen by every pod; unsaid: kube-system/kube-dns default/kubernetes
//       unknown_askers allow|deny     # an asker of no known namespace (unsaid: allow)
//   }

import { ConfigError } from '../../config/errors.ts';
import type { VisibilityPolicy } from '../../config/model.ts';
import { visibilityPolicy } from '../../config/visibility.ts';
import { invalid } from '../args.ts';
import type { Directive } from '../read.ts';

export function visibilityOptions(d: Directive): VisibilityPolicy {
  if (d.args.length > 0) throw invalid(d, `no arguments (the policy is its block), got \`${d.args.join(' ')}\``);
  const allow: Record<string, string[]> = {};
  const fields: Record<string, unknown> = { allow };
  for (const p of d.block ?? []) {
    if (p.name === 'allow' && p.args.length >= 2) allow[p.args[0]] = [...(allow[p.args[0]] ?? []), ...p.args.slice(1)];
    else if (p.name === 'shared' && p.args.length >= 1) fields.shared = [...((fields.shared as string[] | undefined) ?? []), ...p.args];
    else if (p.name === 'unknown_askers' && p.args.length === 1) fields.unknownAskers = p.args[0];
    else throw invalid({ ...d, line: p.line }, `\`${[p.name, ...p.args].join(' ')}\`: expected \`allow NAMESPACE SEEN...\`, \`shared NAMESPACE[/SERVICE]...\` or \`unknown_askers allow|deny\``);
  }
  try {
    return visibilityPolicy(fields);
  } catch (err) {
    if (err instanceof ConfigError) throw invalid(d, err.message.replace(/^visibility: /, '').replaceAll('"unknownAskers"', 'unknown_askers'));
    throw err;
  }
}
