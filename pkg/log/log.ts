// A small leveled logger writing one line per entry to stderr:
//   2026-11-23T00:00:00.000Z I kube-dns/file-source: loaded cluster file path=examples/cluster.yaml objects=12
// Levels follow klog (I, W, E) plus verbosity for debug lines (`--v=N`, as the original's manifests pass).

export type Fields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** Written only when the process verbosity is at least `level`. */
  debug(level: number, msg: string, fields?: Fields): void;
  child(component: string): Logger;
}

let verbosity = 0;
let sink: (line: string) => void = (line) => process.stderr.write(line);

// Output whose reader is gone (the supervisor that read our pipe died) must not take the process
// down mid-shutdown: EPIPE on stderr or stdout is dropped, and the program goes on stopping in order.
for (const stream of [process.stderr, process.stdout]) stream.on('error', () => {});

export function setVerbosity(v: number): void {
  verbosity = v;
}

/** Redirects output (tests capture lines with this). */
export function setSink(write: (line: string) => void): void {
  sink = write;
}

function formatValue(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s !== undefined && /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s ?? String(v));
}

function write(level: string, component: string, msg: string, fields?: Fields): void {
  let line = `${new Date().toISOString()} ${level} ${component}: ${msg}`;
  if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${formatValue(v)}`;
  sink(line + '\n');
}

export function createLogger(component: string): Logger {
  return {
    info: (msg, fields) => write('I', component, msg, fields),
    warn: (msg, fields) => write('W', component, msg, fields),
    error: (msg, fields) => write('E', component, msg, fields),
    debug: (level, msg, fields) => {
      if (verbosity >= level) write('D', component, msg, fields);
    },
    child: (sub) => createLogger(`${component}/${sub}`),
  };
}
