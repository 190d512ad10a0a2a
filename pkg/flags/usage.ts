// The --help text: one line per flag with its type, help and default, in the order of the spec.

import { formatDuration } from './duration.ts';
import type { FlagDef, FlagSpec } from './spec.ts';

export interface UsageInfo {
  /** Program name, e.g. "kube-dns". */
  program: string;
  /** One or more lines describing what the program does and how it is called. */
  usage?: string;
}

function formatDefault(def: FlagDef): string {
  switch (def.type) {
    case 'string':
      return JSON.stringify(def.default);
    case 'duration':
      return formatDuration(def.default);
    case 'stringList':
      return `[${def.default.join(',')}]`;
    default:
      return String(def.default);
  }
}

function typeHint(def: FlagDef): string {
  if (def.type === 'bool') return '';
  if (def.type === 'stringList') return ' strings';
  return ` ${def.type}`;
}

export function formatUsage(spec: FlagSpec, info: UsageInfo): string {
  const rows = Object.entries(spec).map(([name, def]) => {
    const left = `  --${name}${typeHint(def)}`;
    const ignored = def.ignored ? ' (ignored)' : '';
    return [left, `${def.help}${ignored} (default ${formatDefault(def)})`];
  });
  const width = Math.max(0, ...rows.map(([left]) => left.length)) + 3;
  let text = `Usage: ${info.program} [flags]${info.usage ? `\n${info.usage.trimEnd()}` : ''}\n\nFlags:\n`;
  for (const [left, right] of rows) text += `${left.padEnd(width)}${right}\n`;
  text += `  -h, --help${' '.repeat(Math.max(1, width - 12))}show this help\n`;
  return text;
}
