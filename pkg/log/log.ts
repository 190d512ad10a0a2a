// Log entries as Kubernetes components write them, one line each on stderr:
//   text (klog, the default):
//     I1124 00:57:25.778123   12345 program.ts:81] "listening" logger="kube-dns" address="127.0.0.1" port=10053
//   json (--logging-format=json, component-base's schema):
//     {"ts":1732409845778.123,"logger":"kube-dns","caller":"program.ts:81","msg":"listening","v":0,"address":"127.0.0.1","port":10053}
// Severity follows klog (I, W, E); `debug(level, ...)` is klog's V(level).Info: written as I when --v is
// at least `level`. The error of an entry goes in the `err` field (klog's ErrorS, component-base's "err").

import { basename } from 'node:path';

export type Fields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** klog's V(level).Info: written only when the process verbosity (--v) is at least `level`. */
  debug(level: number, msg: string, fields?: Fields): void;
  /** A logger named `<name>/<sub>` (klog's LoggerWithName). */
  child(sub: string): Logger;
  /**
   * A child process's output line into our stream: one that is already an entry in our format (a
   * program of ours logging as we do) is written as it is; any other becomes an info entry whose
   * caller is the line that relays it.
   */
  relay(line: string): void;
}

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

let verbosity = 0;
let format: LogFormat = 'text';
let sink: (line: string) => void = (line) => process.stderr.write(line);

// Output whose reader is gone (the supervisor that read our pipe died) must not take the process
// down mid-shutdown: EPIPE on stderr or stdout is dropped, and the program goes on stopping in order.
for (const stream of [process.stderr, process.stdout]) stream.on('error', () => {});

/** Applies the klog flags: `--v` and `--logging-format`. */
export function configureLogging(o: { verbosity?: number; format?: LogFormat }): void {
  if (o.verbosity !== undefined) verbosity = o.verbosity;
  if (o.format !== undefined) format = o.format;
}

/** The flag that makes another of our programs write this one's format; none for the default. */
export function loggingFormatArgs(): string[] {
  return format === 'text' ? [] : [`--logging-format=${format}`];
}

/** Redirects output (tests capture lines with this). */
export function setSink(write: (line: string) => void): void {
  sink = write;
}

type Severity = 'I' | 'W' | 'E';

interface CallSiteLike {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
}

/** `file:line` of the caller of `fn`, as klog prints it (the file's base name). */
function callerOf(fn: (...args: never[]) => void): string {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = 1;
  Error.prepareStackTrace = (_err, sites) => sites;
  const holder: { stack?: CallSiteLike[] } = {};
  Error.captureStackTrace(holder, fn);
  const site = holder.stack?.[0];
  Error.prepareStackTrace = prepare;
  Error.stackTraceLimit = limit;
  const file = site?.getFileName();
  return file ? `${basename(file)}:${site!.getLineNumber() ?? 0}` : '???:1';
}

/** Go's strconv.Quote for the text we log: JSON's escapes, with \xNN for control bytes as Go writes them. */
export function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1').replace(/\x7f/g, '\\x7f');
}

function textValue(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (v instanceof Error) return goQuote(v.message);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? goQuote(String(v));
}

function jsonValue(v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (typeof v === 'bigint') return Number(v);
  return v;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** klog's header time, local like klog's: `1124 00:57:25.778123`. */
function klogTime(micros: number): string {
  const d = new Date(Math.floor(micros / 1000));
  const us = String(Math.floor(micros % 1_000_000)).padStart(6, '0');
  return `${pad2(d.getMonth() + 1)}${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${us}`;
}

function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

function textLine(severity: Severity, name: string, caller: string, msg: string, fields: Fields | undefined): string {
  let line = `${severity}${klogTime(nowMicros())} ${String(process.pid).padStart(7)} ${caller}] ${goQuote(msg)} logger=${goQuote(name)}`;
  if (fields) for (const k in fields) if (fields[k] !== undefined) line += ` ${k}=${textValue(fields[k])}`;
  return line + '\n';
}

function jsonLine(severity: Severity, level: number, name: string, caller: string, msg: string, fields: Fields | undefined): string {
  // Key order as component-base writes it: ts, logger, caller, msg, then v (info) or err (error), then the rest.
  const entry: Record<string, unknown> = { ts: nowMicros() / 1000, logger: name, caller, msg };
  if (severity === 'E') {
    if (fields?.err !== undefined) entry.err = jsonValue(fields.err);
  } else entry.v = level;
  if (fields) for (const k in fields) if (fields[k] !== undefined && !(k in entry)) entry[k] = jsonValue(fields[k]);
  return JSON.stringify(entry) + '\n';
}

function write(severity: Severity, level: number, name: string, caller: string, msg: string, fields?: Fields): void {
  sink(format === 'json' ? jsonLine(severity, level, name, caller, msg, fields) : textLine(severity, name, caller, msg, fields));
}

export function createLogger(name: string): Logger {
  const logger: Logger = {
    info: (msg, fields) => write('I', 0, name, callerOf(logger.info), msg, fields),
    warn: (msg, fields) => write('W', 0, name, callerOf(logger.warn), msg, fields),
    error: (msg, fields) => write('E', 0, name, callerOf(logger.error), msg, fields),
    debug: (level, msg, fields) => {
      if (verbosity >= level) write('I', level, name, callerOf(logger.debug), msg, fields);
    },
    child: (sub) => createLogger(`${name}/${sub}`),
    relay: (line) => {
      if (format === 'json' ? line.startsWith('{"ts":') : KLOG_HEADER.test(line)) sink(line + '\n');
      else write('I', 0, name, callerOf(logger.relay), line);
    },
  };
  return logger;
}

const KLOG_HEADER = /^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^ \]]+:\d+\] /;
