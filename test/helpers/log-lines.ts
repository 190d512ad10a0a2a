// Reads our programs' log entries back, in either format (klog text or Kubernetes JSON), so that a test
// asserts what an entry says rather than how it is spelled. `plainLine` renders an entry as one short
// line, `<ISO time> <severity> <logger>: <msg> key=value ...` (values quoted only when they must be),
// which is what the tests' regexes match; the format tests (test/integration/log-format.test.ts) read the raw lines.

export interface LogEntry {
  format: 'text' | 'json';
  /** I, W, E (klog); JSON has I (an entry with "v") and E (one with "err" and no "v"). */
  severity: string;
  /** Milliseconds since the epoch (text: to the microsecond, local time as klog writes it). */
  ts: number;
  pid?: number;
  caller: string;
  logger: string;
  msg: string;
  /** The verbosity of a JSON info entry. */
  v?: number;
  fields: Record<string, unknown>;
  /** Whatever came before the entry on its line (npm start's `kube-dns      | ` column). */
  prefix: string;
}

const KLOG = /([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) +(\d+) ([^ \]]+:\d+)\] /;

/** Go's strconv.Quote back to a string (JSON's escapes plus \xNN). */
function unquoteGo(quoted: string): string {
  return JSON.parse(quoted.replace(/\\(x([0-9a-fA-F]{2})|.)/g, (all, _e, hex) => (hex ? `\\u00${hex}` : all))) as string;
}

/** The end (exclusive) of the value starting at `i`: a quoted string, a JSON array/object, or a bare token. */
function valueEnd(s: string, i: number): number {
  if (s[i] === '"') {
    let j = i + 1;
    while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
    return j + 1;
  }
  if (s[i] === '[' || s[i] === '{') {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (c === '"') {
        j++;
        while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
      } else if (c === '[' || c === '{') depth++;
      else if (c === ']' || c === '}') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return s.length;
  }
  const space = s.indexOf(' ', i);
  return space < 0 ? s.length : space;
}

function readValue(text: string): unknown {
  if (text.startsWith('"')) return unquoteGo(text);
  if (text.startsWith('[') || text.startsWith('{') || text === 'true' || text === 'false' || text === 'null') return JSON.parse(text);
  return /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text) ? Number(text) : text;
}

function parseText(line: string, m: RegExpExecArray): LogEntry | undefined {
  const [, severity, month, day, hh, mm, ss, micros, pid, caller] = m;
  const d = new Date();
  d.setMonth(Number(month) - 1, Number(day));
  d.setHours(Number(hh), Number(mm), Number(ss), 0);
  const body = line.slice(m.index + m[0].length);
  if (!body.startsWith('"')) return undefined;
  const msgEnd = valueEnd(body, 0);
  const fields: Record<string, unknown> = {};
  let i = msgEnd;
  while (i < body.length) {
    if (body[i] !== ' ') return undefined;
    const eq = body.indexOf('=', i);
    if (eq < 0) return undefined;
    const key = body.slice(i + 1, eq);
    const end = valueEnd(body, eq + 1);
    fields[key] = readValue(body.slice(eq + 1, end));
    i = end;
  }
  const logger = typeof fields.logger === 'string' ? fields.logger : '';
  delete fields.logger;
  return {
    format: 'text',
    severity,
    ts: d.getTime() + Number(micros) / 1000,
    pid: Number(pid),
    caller,
    logger,
    msg: unquoteGo(body.slice(0, msgEnd)),
    fields,
    prefix: line.slice(0, m.index),
  };
}

function parseJson(line: string, start: number): LogEntry | undefined {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line.slice(start)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof o.ts !== 'number' || typeof o.msg !== 'string') return undefined;
  const { ts, caller, logger, msg, v, ...fields } = o;
  return {
    format: 'json',
    severity: v === undefined && 'err' in fields ? 'E' : 'I',
    ts,
    caller: String(caller),
    logger: typeof logger === 'string' ? logger : '',
    msg,
    v: typeof v === 'number' ? v : undefined,
    fields,
    prefix: line.slice(0, start),
  };
}

/** The entry on `line`, in either format, after any prefix; undefined for any other line. */
export function parseLogLine(line: string): LogEntry | undefined {
  const m = KLOG.exec(line);
  if (m) return parseText(line, m);
  const brace = line.indexOf('{"ts":');
  return brace >= 0 ? parseJson(line, brace) : undefined;
}

function plainValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s !== undefined && /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s ?? String(v));
}

/** `line` as `<prefix><ISO time> <severity> <logger>: <msg> key=value ...`; a line that is no entry, unchanged. */
export function plainLine(line: string): string {
  const newline = line.endsWith('\n') ? '\n' : '';
  const e = parseLogLine(newline ? line.slice(0, -1) : line);
  if (e === undefined) return line;
  let out = `${e.prefix}${new Date(e.ts).toISOString()} ${e.severity} ${e.logger}: ${e.msg}`;
  for (const [k, v] of Object.entries(e.fields)) out += ` ${k}=${plainValue(v)}`;
  return out + newline;
}

/** A child's output as it arrives: the raw text, and the same with every complete line made plain. */
export class OutputLines {
  private rawText = '';
  private plainDone = '';
  private pending = '';

  push(chunk: string): void {
    this.rawText += chunk;
    this.pending += chunk;
    const nl = this.pending.lastIndexOf('\n');
    if (nl < 0) return;
    for (const line of this.pending.slice(0, nl).split('\n')) this.plainDone += plainLine(line) + '\n';
    this.pending = this.pending.slice(nl + 1);
  }

  raw(): string {
    return this.rawText;
  }

  plain(): string {
    return this.plainDone + this.pending;
  }
}
