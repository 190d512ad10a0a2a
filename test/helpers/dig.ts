// Runs the real `dig` and reads its output back into a structure tests can assert on: the one dig
// runner and parser every test uses.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface DigRecord {
  name: string;
  ttl: number;
  class: string;
  type: string;
  /** The record data as dig prints it ("10 100 80 web.example.", "\"a b\""). */
  data: string;
}

/** dig's "; EDNS:" line from the OPT pseudosection: the OPT record of the reply. */
export interface DigEdns {
  version: number;
  /** Flag names such as "do"; empty when none are set. */
  flags: string[];
  udp: number;
}

export interface DigResult {
  status: string;
  flags: string[];
  /** The question's name as echoed in the reply. */
  question: string;
  answer: DigRecord[];
  authority: DigRecord[];
  additional: DigRecord[];
  /** The reply's OPT record, null when the reply has none. */
  edns: DigEdns | null;
  /** dig's raw output, for failure messages and for what only the text shows ("(TCP)", retries). */
  raw: string;
}

type Section = 'question' | 'answer' | 'authority' | 'additional' | null;

const sections: Record<string, Section> = {
  ';; QUESTION SECTION:': 'question',
  ';; ANSWER SECTION:': 'answer',
  ';; AUTHORITY SECTION:': 'authority',
  ';; ADDITIONAL SECTION:': 'additional',
};

function parseRecord(line: string): DigRecord {
  const m = /^(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
  if (!m) throw new Error(`not a dig record line: ${JSON.stringify(line)}`);
  return { name: m[1], ttl: Number(m[2]), class: m[3], type: m[4], data: m[5] };
}

function parseEdns(line: string): DigEdns {
  const m = /^; EDNS: version: (\d+), flags:([^;]*); udp: (\d+)$/.exec(line);
  // An EDNS line we cannot read must fail the test, never pass for "no OPT".
  if (!m) throw new Error(`unexpected dig EDNS line: ${JSON.stringify(line)}`);
  const flags = m[2].trim();
  return { version: Number(m[1]), flags: flags === '' ? [] : flags.split(/\s+/), udp: Number(m[3]) };
}

export function parseDig(out: string): DigResult {
  const r: DigResult = { status: '', flags: [], question: '', answer: [], authority: [], additional: [], edns: null, raw: out };
  let section: Section = null;
  for (const line of out.split('\n')) {
    const status = /status: (\w+)/.exec(line);
    if (status) r.status = status[1];
    const flags = /^;; flags: ([^;]*);/.exec(line);
    if (flags) r.flags = flags[1].trim().split(/\s+/);
    if (line.startsWith('; EDNS:')) r.edns = parseEdns(line);
    if (line in sections) section = sections[line];
    else if (line.trim() === '') section = null;
    else if (section === 'question' && !r.question) r.question = line.slice(1).split(/\s+/)[0];
    else if (section && section !== 'question' && !line.startsWith(';')) r[section].push(parseRecord(line));
  }
  return r;
}

/**
 * `dig @127.0.0.1 -p PORT name type` with one try of at most 3 s; rejects if dig itself fails (a
 * timeout, say). `extra` comes last, so it can override those defaults (e.g. `+time=8`).
 */
export async function dig(port: number, name: string, type = 'A', extra: string[] = []): Promise<DigResult> {
  // An empty name leaves the question to `extra` (e.g. `-x 10.0.0.1`).
  const question = name === '' ? [] : [name, type];
  const args = ['@127.0.0.1', '-p', String(port), ...question, '+tries=1', '+time=3', ...extra];
  const { stdout } = await run('dig', args, { timeout: 15_000 });
  return parseDig(stdout);
}

/** The data fields of the answer section, sorted: what most assertions compare. */
export const answers = (r: DigResult, type?: string): string[] =>
  r.answer.filter((a) => !type || a.type === type).map((a) => a.data).sort();
