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

/** Worth printing: not an empty string or list, not a false switch, not a flag given bare (--version). */
function hasDefault(def: FlagDef): boolean {
  if ('bareValue' in def && def.bareValue !== undefined) return false;
  if (def.type === 'bool') return def.default;
  if (def.type === 'string') return def.default !== '';
  if (def.type === 'stringList') return def.default.length > 0;
  return true;
}

/** Names as a wrapped list, `--a, --b, ...`, each line indented. */
function wrapped(names: string[], width = 100): string {
  const lines: string[] = [];
  let line = ' ';
  for (const n of names) {
    const next = `${line} --${n},`;
    if (next.length > width && line.trim() !== '') {
      lines.push(line);
      line = `  --${n},`;
    } else line = next;
  }
  lines.push(line.replace(/,$/, ''));
  return lines.join('\n');
}

/**
 * The usage line, one row per flag (its type, help, and a default where one says something), and
 * the flags accepted only for compatibility listed together at the end.
 */
export function formatUsage(spec: FlagSpec, info: UsageInfo): string {
  const entries = Object.entries(spec);
  const rows = entries
    .filter(([, def]) => !def.ignored)
    .map(([name, def]) => [`  --${name}${typeHint(def)}`, `${def.help}${hasDefault(def) ? ` (default ${formatDefault(def)})` : ''}`]);
  const width = Math.max(0, ...rows.map(([left]) => left.length)) + 3;
  let text = `Usage: ${info.usage ? info.usage.trimEnd() : `${info.program} [flags]`}\n\nFlags:\n`;
  for (const [left, right] of rows) text += `${left.padEnd(width)}${right}\n`;
  text += `  -h, --help${' '.repeat(Math.max(1, width - 12))}show this help\n`;
  const ignored = entries.filter(([, def]) => def.ignored).map(([name]) => name);
  if (ignored.length > 0) text += `\nAccepted for compatibility with the original, and ignored:\n${wrapped(ignored)}\n`;
  return text;
}
