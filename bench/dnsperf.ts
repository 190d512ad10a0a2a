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
 * Each answered query's name and latency (ms) at a fixed offered load, from dnsperf's per-query lines
 * (`-v`), and how many were sent; `extra` arguments are added (`-a <address>`: another asker), `cpus`
 * pins it (a taskset list).
 */
export async function dnsperfTimes(port: number, queryFile: string, seconds: number, rate: number, extra: string[] = [], cpus?: string): Promise<{ sent: number; times: { name: string; ms: number }[] }> {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(seconds), '-T', '1', '-c', '1', '-Q', String(rate), '-v', ...extra];
  const { stdout } = await run(cpus === undefined ? 'dnsperf' : 'taskset', cpus === undefined ? args : ['-c', cpus, 'dnsperf', ...args], {
    timeout: (seconds + 30) * 1000,
    maxBuffer: 256 * 1024 * 1024,
  });
  const times = [...stdout.matchAll(/^> \S+ (\S+) \S+ ([\d.]+)$/gm)].map((m) => ({ name: m[1], ms: Number(m[2]) * 1000 }));
  return { sent: Number(/Queries sent:\s+(\d+)/.exec(stdout)?.[1] ?? NaN), times };
}

/** The `q` quantile of `ms` (sorted here). */
export function quantile(ms: number[], q: number): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Latency percentiles at a fixed offered load (dnsperfTimes). */
export async function dnsperfLatency(port: number, queryFile: string, seconds: number, rate: number, extra: string[] = [], cpus?: string): Promise<LatencyResult> {
  const { sent, times } = await dnsperfTimes(port, queryFile, seconds, rate, extra, cpus);
  const ms = times.map((t) => t.ms);
  return { rate, sent, answered: ms.length, p50Ms: quantile(ms, 0.5), p90Ms: quantile(ms, 0.9), p99Ms: quantile(ms, 0.99), p999Ms: quantile(ms, 0.999) };
}
