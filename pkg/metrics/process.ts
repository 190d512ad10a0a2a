// The process's own metrics, under the names Prometheus's client libraries give them (Go's process
// collector, prom-client's defaults), read at each scrape: CPU, memory, file descriptors, start
// time, and Node's heap, version and event loop lag. Nothing runs between scrapes (no timer, no GC
// observer).

const { readdirSync, readFileSync } = process.getBuiltinModule('node:fs');
import type { Collector, Exposition, MetricType, Registry } from './registry.ts';

/** A single-sample family read at each scrape (null: not on this system). */
function single(type: MetricType, name: string, help: string, read: () => number | null): Collector {
  return {
    name,
    help,
    type,
    collect(out: Exposition) {
      const v = read();
      if (v !== null) out.sample(name, null, v);
    },
  };
}

/** A `kB` field of /proc/self/status, in bytes; null where there is none (not Linux). */
function statusBytes(status: string | null, field: string): number | null {
  const m = status === null ? null : new RegExp(`^${field}:\\s*(\\d+) kB$`, 'm').exec(status);
  return m === null ? null : Number(m[1]) * 1024;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function openFds(): number | null {
  try {
    // The directory's own descriptor, open while it is read, is not the process's.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return null;
  }
}

function maxFds(): number | null {
  const m = /^Max open files\s+(\d+)/m.exec(readOrNull('/proc/self/limits') ?? '');
  return m === null ? null : Number(m[1]);
}

const START_SECONDS = Math.round(Date.now() / 1000 - process.uptime());

/** Registers the process's metrics in `registry`. */
export function registerProcessMetrics(registry: Registry): void {
  const cpu = (pick: (u: NodeJS.CpuUsage) => number) => () => pick(process.cpuUsage()) / 1e6;
  const memory = (field: string) => () => statusBytes(readOrNull('/proc/self/status'), field);
  for (const c of [
    single('counter', 'process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', cpu((u) => u.user)),
    single('counter', 'process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', cpu((u) => u.system)),
    single('counter', 'process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', cpu((u) => u.user + u.system)),
    single('gauge', 'process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => START_SECONDS),
    single('gauge', 'process_resident_memory_bytes', 'Resident memory size in bytes.', () => memory('VmRSS')() ?? process.memoryUsage.rss()),
    single('gauge', 'process_virtual_memory_bytes', 'Virtual memory size in bytes.', memory('VmSize')),
    single('gauge', 'process_heap_bytes', 'Process heap size in bytes.', memory('VmData')),
    single('gauge', 'process_open_fds', 'Number of open file descriptors.', openFds),
    single('gauge', 'process_max_fds', 'Maximum number of open file descriptors.', maxFds),
    single('gauge', 'nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', () => process.memoryUsage().heapTotal),
    single('gauge', 'nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => process.memoryUsage().heapUsed),
    single('gauge', 'nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => process.memoryUsage().external),
    versionInfo(),
    eventLoopLag(),
  ]) registry.register(c);
}

function versionInfo(): Collector {
  const [major, minor, patch] = process.versions.node.split('.');
  const labels = { version: process.version, major, minor, patch };
  return { name: 'nodejs_version_info', help: 'Node.js version info.', type: 'gauge', collect: (out) => out.sample('nodejs_version_info', labels, 1) };
}

/** How long a callback queued at the scrape waits for the event loop: what a query arriving now would wait. */
function eventLoopLag(): Collector {
  return {
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of event loop in seconds.',
    type: 'gauge',
    collect(out) {
      const started = performance.now();
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          out.sample('nodejs_eventloop_lag_seconds', null, (performance.now() - started) / 1000);
          resolve();
        }),
      );
    },
  };
}
