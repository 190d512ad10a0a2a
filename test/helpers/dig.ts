// Runs the real `dig` and reads its output back into a structure tests can assert on.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface DigRecord {
  name: string;
  ttl: number;
  class: string;
  type: string;
  data: string;
}

export interface DigResult {
  status: string;
  flags: string[];
  question: string;
  answer: DigRecord[];
  authority: DigRecord[];
  additional: DigRecord[];
  /** dig's raw output, for failure messages. */
  raw: string;
}

function parseRecord(line: string): DigRecord {
  const [name, ttl, cls, type, ...rest] = line.split(/\s+/);
  return { name, ttl: Number(ttl), class: cls, type, data: rest.join(' ') };
}

export function parseDig(out: string): DigResult {
  const r: DigResult = { status: '', flags: [], question: '', answer: [], authority: [], additional: [], raw: out };
  let section: 'answer' | 'authority' | 'additional' | null = null;
  for (const line of out.split('\n')) {
    const status = /status: (\w+)/.exec(line);
    if (status) r.status = status[1];
    const flags = /^;; flags: ([^;]*);/.exec(line);
    if (flags) r.flags = flags[1].trim().split(/\s+/);
    if (line.startsWith(';; QUESTION SECTION:')) section = null;
    else if (line.startsWith(';; ANSWER SECTION:')) section = 'answer';
    else if (line.startsWith(';; AUTHORITY SECTION:')) section = 'authority';
    else if (line.startsWith(';; ADDITIONAL SECTION:')) section = 'additional';
    else if (line.trim() === '') section = null;
    else if (line.startsWith(';') && !r.question && /^;[^;]/.test(line)) r.question = line.slice(1).split(/\s+/)[0];
    else if (section && !line.startsWith(';')) r[section].push(parseRecord(line));
  }
  return r;
}

/** `dig @127.0.0.1 -p PORT name type ...extra` with one try; rejects if dig itself fails. */
export async function dig(port: number, name: string, type = 'A', extra: string[] = []): Promise<DigResult> {
  // An empty name leaves the question to `extra` (e.g. `-x 10.0.0.1`).
  const question = name === '' ? [] : [name, type];
  const args = ['@127.0.0.1', '-p', String(port), ...question, '+tries=1', '+time=3', '+nocookie', ...extra];
  const { stdout } = await run('dig', args, { timeout: 15_000 });
  return parseDig(stdout);
}

/** The data fields of the answer section, sorted: what most assertions compare. */
export const answers = (r: DigResult, type?: string): string[] =>
  r.answer.filter((a) => !type || a.type === type).map((a) => a.data).sort();
