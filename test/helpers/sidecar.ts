// The real sidecar program on 127.0.0.1 (HTTP on a free port), and readers for what it serves:
// /healthcheck/<label> and the Prometheus text of /metrics.

import type { Test } from 'tap';
import { startProgram } from './process.ts';
import type { Program } from './process.ts';

export interface Sidecar {
  program: Program;
  port: number;
}

/** Starts the sidecar with `args` after loopback HTTP on port 0; resolves once it listens. */
export async function startSidecar(t: Test, args: string[]): Promise<Sidecar> {
  const program = startProgram(t, 'sidecar', ['--prometheus-addr=127.0.0.1', '--prometheus-port=0', ...args]);
  const m = await program.waitFor(/HTTP listening .*port=(\d+)/);
  return { program, port: Number(m[1]) };
}

export interface HttpReply {
  status: number;
  type: string;
  body: string;
}

export async function get(port: number, path: string): Promise<HttpReply> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

export interface Health {
  status: number;
  type: string;
  /** The JSON body, as parsed. */
  json: { IsOk: boolean; LatencySeconds: number; Err: string };
  body: string;
}

export async function healthcheck(port: number, label: string): Promise<Health> {
  const r = await get(port, `/healthcheck/${label}`);
  return { ...r, json: JSON.parse(r.body) };
}

/** Every sample of /metrics: `name{labels}` → value. */
export async function scrape(port: number): Promise<Map<string, number>> {
  const r = await get(port, '/metrics');
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}: ${r.body}`);
  return parseSamples(r.body);
}

/** Every sample of a Prometheus text exposition: `name{labels}` → value. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** One sample's value; throws when /metrics does not have it (a missing metric must fail a test). */
export function sample(samples: Map<string, number>, name: string): number {
  const v = samples.get(name);
  if (v === undefined) throw new Error(`no sample ${name} in /metrics`);
  return v;
}
