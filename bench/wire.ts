// Latency as the wire sees it: tcpdump on lo (kernel timestamps) records the askers' queries and the
// server's answers, and each answer is paired with its query (asker address and port, DNS ID). Left
// out: the askers' own scheduling, which on a small machine shares its CPU with the flood and the
// backends and reads as the server's latency in dnsperf's figures. Needs root and tcpdump; without
// either, null (the figures then come from dnsperf alone).

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { readName } from '../pkg/dns/names.ts';

/** One query answered: its name, milliseconds from query to answer, and the first answer record's TTL (-1: none). */
export interface WireTime {
  name: string;
  ms: number;
  ttl: number;
}

export interface WireTimes {
  times: WireTime[];
}

export interface WireCapture {
  stop(): Promise<WireTimes>;
}

/** Whether a capture can run here (root, tcpdump on the PATH). */
export function wireCanCapture(): boolean {
  return process.getuid?.() === 0 && spawnSync('tcpdump', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Starts capturing UDP between `askers` and `port` into `file` (on `cpu`); resolves once tcpdump listens. */
export async function captureWire(file: string, askers: readonly string[], port: number, cpu: string): Promise<WireCapture> {
  const filter = `udp and port ${port} and (${askers.map((a) => `host ${a}`).join(' or ')})`;
  const child = spawn('taskset', ['-c', cpu, 'tcpdump', '-i', 'lo', '-n', '-q', '-B', '65536', '--time-stamp-precision=nano', '-w', file, filter], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening on')) resolve();
    });
    child.on('exit', () => reject(new Error(`tcpdump: ${err.trim()}`)));
  });
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      const times = pairs(readFileSync(file), port);
      rmSync(file, { force: true });
      return { times };
    },
  };
}

/** The pcap's queries to `port` paired with their answers (nanosecond pcap, Ethernet framing as on lo). */
function pairs(pcap: Buffer, port: number): WireTime[] {
  if (pcap.length < 24 || pcap.readUInt32LE(0) !== 0xa1b23c4d) throw new Error('not a little-endian nanosecond pcap');
  const asked = new Map<string, { at: number; name: string }>();
  const times: WireTime[] = [];
  for (let p = 24; p + 16 <= pcap.length; ) {
    const at = pcap.readUInt32LE(p) * 1e3 + pcap.readUInt32LE(p + 4) / 1e6;
    const length = pcap.readUInt32LE(p + 8);
    const frame = pcap.subarray(p + 16, p + 16 + length);
    p += 16 + length;
    const ip = 14;
    if (frame.length < ip + 20 || frame[ip + 9] !== 17) continue;
    const udp = ip + (frame[ip] & 0xf) * 4;
    const dns = udp + 8;
    if (frame.length < dns + 12) continue;
    const [from, to] = [frame.readUInt16BE(udp), frame.readUInt16BE(udp + 2)];
    const src = frame.readUInt32BE(ip + 12);
    const dst = frame.readUInt32BE(ip + 16);
    const id = frame.readUInt16BE(dns);
    if (to === port) {
      const key = `${src}:${from}:${id}`;
      // lo may show a packet twice: the first sight is when it was sent.
      if (!asked.has(key)) asked.set(key, { at, name: readName(frame, { pos: dns + 12 }, frame.length) });
    } else if (from === port) {
      const q = asked.get(`${dst}:${to}:${id}`);
      if (q === undefined) continue;
      asked.delete(`${dst}:${to}:${id}`);
      times.push({ name: q.name, ms: at - q.at, ttl: firstTtl(frame.subarray(dns)) });
    }
  }
  return times;
}

/**
 * The TTL of `msg`'s first answer record, -1 when it has none: a cache's answer fetched just then
 * carries the full TTL, one it kept a while less (how a refresh is told from a hit).
 */
function firstTtl(msg: Buffer): number {
  if (msg.readUInt16BE(6) === 0) return -1;
  const cur = { pos: 12 };
  readName(msg, cur, msg.length);
  cur.pos += 4;
  readName(msg, cur, msg.length);
  return cur.pos + 8 <= msg.length ? msg.readUInt32BE(cur.pos + 4) : -1;
}
