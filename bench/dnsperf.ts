// Runs Debian's dnsperf and reads its summary.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PerfResult {
  qps: number;
  sent: number;
  completed: number;
  lost: number;
  avgLatencyMs: number;
  maxLatencyMs: number;
}

/** dnsperf's summary of one run; `cpus`: run it on those CPUs only (a taskset list, e.g. `1`). */
export async function dnsperf(port: number, queryFile: string, seconds: number, extra: string[] = [], cpus?: string): Promise<PerfResult> {
  const pinned = cpus === undefined ? [] : ['-c', cpus, 'dnsperf'];
  const { stdout } = await run(cpus === undefined ? 'dnsperf' : 'taskset', [...pinned, '-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(seconds), '-T', '1', '-c', '1', '-q', '200', ...extra], {
    timeout: (seconds + 30) * 1000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const num = (re: RegExp): number => Number(re.exec(stdout)?.[1] ?? NaN);
  return {
    qps: num(/Queries per second:\s+([\d.]+)/),
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    avgLatencyMs: num(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
    maxLatencyMs: num(/max ([\d.]+)\)/) * 1000,
  };
}

export interface LatencyResult {
  /** Offered load (queries per second). */
  rate: number;
  sent: number;
  answered: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
}

/**
 * Latency percentiles at a fixed offered load, from dnsperf's per-query lines (`-v`); `extra`
 * arguments are added (`-a <address>`: another asker), `cpus` pins it (a taskset list).
 */
export async function dnsperfLatency(port: number, queryFile: string, seconds: number, rate: number, extra: string[] = [], cpus?: string): Promise<LatencyResult> {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(seconds), '-T', '1', '-c', '1', '-Q', String(rate), '-v', ...extra];
  const { stdout } = await run(cpus === undefined ? 'dnsperf' : 'taskset', cpus === undefined ? args : ['-c', cpus, 'dnsperf', ...args], {
    timeout: (seconds + 30) * 1000,
    maxBuffer: 256 * 1024 * 1024,
  });
  const times: number[] = [];
  for (const m of stdout.matchAll(/^> \S+ \S+ \S+ ([\d.]+)$/gm)) times.push(Number(m[1]) * 1000);
  times.sort((a, b) => a - b);
  const at = (q: number): number => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  const sent = Number(/Queries sent:\s+(\d+)/.exec(stdout)?.[1] ?? NaN);
  return { rate, sent, answered: times.length, p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), p999Ms: at(0.999) };
}
