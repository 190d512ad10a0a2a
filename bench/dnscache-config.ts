// Part 3 of the dnscache benchmark: queries lost while the kube-dns ConfigMap changes under load.
// dnsmasq-nanny (the built entry, production Node flags) supervises our dnscache, and a second one
// the real dnsmasq, on the same child arguments. For each, three dnsperf runs at one fixed rate,
// well under every server's ceiling, mixing cache hits, misses and stub-domain names:
//   baseline: nothing changes (dnsperf loses a few queries at the edges of any run);
//   sighup:   the stub domain's server swapped between two upstreams (servers-file + SIGHUP);
//   restart:  upstreamNameservers flipped none <-> some: dnsmasq restarts (--no-resolv changes);
//             dnscache takes it by SIGHUP (a no-resolv line in its servers-file).
// Each change must show up in an answer (a never-asked name answered by the new route) and in the
// nanny's log, so a run where nothing happened cannot pass as "0 lost". A prober beside dnsperf
// asks one name every 10 ms; its unanswered stretches say how long the port went unanswered.
//
// Env: BENCH_CONFIG (1; 0 skips this part), BENCH_CONFIG_CHANGES (10), BENCH_CONFIG_RATE (5000
// queries/s), BENCH_CONFIG_SECONDS (25 per run), BENCH_CONFIG_INTERVAL_MS (2000 between changes),
// BENCH_CONFIG_LOGS=<dir> (keep each nanny's output there).
// Run alone: `npm run build && npx node bench/dnscache-config.ts` (prints the section, writes nothing).

import { execFile, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { makeCluster } from './fixtures.ts';
import { oneThread, programArgs, startDnsmasq, stopper, waitForLine } from './servers.ts';
import type { Running } from './servers.ts';
import { freePort } from '../test/helpers/ports.ts';
import { dnsmasqReadableDir } from '../test/helpers/dnsmasq.ts';
import { plainLine } from '../test/helpers/log-lines.ts';
import { CHILD_READY } from '../test/helpers/nanny.ts';

export const CONFIG_ENABLED = process.env.BENCH_CONFIG !== '0';
const CHANGES = Number(process.env.BENCH_CONFIG_CHANGES ?? 10);
const RATE = Number(process.env.BENCH_CONFIG_RATE ?? 5000);
const INTERVAL_MS = Number(process.env.BENCH_CONFIG_INTERVAL_MS ?? 2000);
/** The first change comes this long after dnsperf starts. */
const LEAD_MS = 2000;
/** Every run lasts as long as the changes plus 3 s for the last one to settle. */
const SECONDS = Math.max(Number(process.env.BENCH_CONFIG_SECONDS ?? 25), Math.ceil((LEAD_MS + (CHANGES - 1) * INTERVAL_MS) / 1000) + 3);
/** dnsperf's and the prober's timeout. */
const TIMEOUT_S = 2;
const PROBE_EVERY_MS = 10;
const NAMES = 2000;
/** A directory to keep each nanny's output in (nanny-<forwarder>.log), child lines included. */
const LOGS = process.env.BENCH_CONFIG_LOGS;

const FORWARDERS = ['dnscache', 'dnsmasq'] as const;
type Forwarder = (typeof FORWARDERS)[number];
const PATHS = ['baseline', 'sighup', 'restart'] as const;
type ChangePath = (typeof PATHS)[number];

const STUB_DOMAIN = 'stub.bench';
const MISS_DOMAIN = 'miss.bench';
/** What the main upstream (A) and the second stub upstream (B) answer for names in their domains. */
const MISS_ADDRESS = '192.0.2.1';
const STUB_ADDRESS_A = '192.0.2.2';
const STUB_ADDRESS_B = '192.0.2.3';

/** The nanny's lines (read plain) that say which path a change took. */
const LOGGED_RELOAD = /child reloaded \(SIGHUP\).* sighup=sent/g;
const LOGGED_RESTART = /command line changed: restarting the child/g;
const CHILD_STARTED = /child started pid=(\d+)/g;
const UNEXPECTED_EXIT = /child exited unexpectedly/g;

export interface ProbeSummary {
  sent: number;
  unanswered: number;
  /** Stretches of consecutive unanswered probes. */
  gaps: number;
  /** From the first unanswered probe of a stretch to the next answered one. */
  maxGapMs: number;
  totalGapMs: number;
}

export interface ConfigRun {
  forwarder: Forwarder;
  path: ChangePath;
  /** Config versions written. */
  changes: number;
  /** Changes seen in an answer before the next one was due. */
  verified: number;
  /** Written → first answer showing it, per verified change. */
  applyMs: number[];
  /** Nanny log lines: `child reloaded (SIGHUP) ... sighup=sent` (sighup) or `restarting the child` (restart). */
  logged: number;
  childStarts: number;
  unexpectedExits: number;
  perf: LoadResult;
  /** Per restart: SIGTERM to the old child's exit, and the new child's spawn to its ready line (as the nanny's lines reached us). */
  stopMs: number[];
  startMs: number[];
  lostOverBaseline: number;
  probes: ProbeSummary;
}

export interface ConfigResults {
  rate: number;
  seconds: number;
  changes: number;
  intervalMs: number;
  /** Load average when part 3 started: other work on a shared machine stalls servers, and stalls lose queries. */
  load: string;
  childArgs: string;
  runs: ConfigRun[];
}

// ---- the load ----

export interface LoadResult {
  sent: number;
  completed: number;
  lost: number;
  /** dnsperf's response codes: NOERROR, SERVFAIL, REFUSED... (an answer that is an error is not lost, and not fine either). */
  rcodes: Record<string, number>;
}

const execFileAsync = promisify(execFile);

/**
 * dnsperf at a fixed rate with room for every query of a timeout's worth outstanding, so a port that
 * goes quiet shows as lost queries rather than as queries never sent. bench/dnsperf.ts's summary
 * has no response codes, hence this run of our own.
 */
async function runLoad(port: number, queryFile: string, seconds: number): Promise<LoadResult> {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(seconds), '-c', '1', '-T', '1', '-Q', String(RATE), '-t', String(TIMEOUT_S), '-q', String(RATE * TIMEOUT_S + 1000)];
  const { stdout } = await execFileAsync('dnsperf', args, { timeout: (seconds + 30) * 1000, maxBuffer: 256 * 1024 * 1024 });
  const field = (name: string): number => Number(new RegExp(`Queries ${name}:\\s+(\\d+)`).exec(stdout)?.[1] ?? NaN);
  const rcodes: Record<string, number> = {};
  for (const m of (/Response codes:([^\n]*)/.exec(stdout)?.[1] ?? '').matchAll(/([A-Z]+) (\d+)/g)) rcodes[m[1]] = Number(m[2]);
  return { sent: field('sent'), completed: field('completed'), lost: field('lost'), rcodes };
}

// ---- a small UDP client: the prober and the checks that a change took effect ----

interface Reply {
  rcode: number;
  /** The first A record's address. */
  address: string | undefined;
}

function encodeA(id: number, name: string): Buffer {
  const parts: Buffer[] = [Buffer.alloc(12)];
  parts[0].writeUInt16BE(id, 0);
  parts[0].writeUInt16BE(0x0100, 2); // RD
  parts[0].writeUInt16BE(1, 4); // one question
  for (const label of name.split('.')) parts.push(Buffer.from([label.length]), Buffer.from(label, 'ascii'));
  parts.push(Buffer.from([0, 0, 1, 0, 1])); // root, A, IN
  return Buffer.concat(parts);
}

function decodeReply(msg: Buffer): Reply {
  const rcode = msg[3] & 0x0f;
  let at = 12;
  const skipName = () => {
    while (msg[at] !== 0 && (msg[at] & 0xc0) !== 0xc0) at += msg[at] + 1;
    at += msg[at] === 0 ? 1 : 2;
  };
  try {
    for (let q = msg.readUInt16BE(4); q > 0; q--) {
      skipName();
      at += 4;
    }
    for (let a = msg.readUInt16BE(6); a > 0; a--) {
      skipName();
      const type = msg.readUInt16BE(at);
      const length = msg.readUInt16BE(at + 8);
      at += 10;
      if (type === 1 && length === 4) return { rcode, address: [...msg.subarray(at, at + 4)].join('.') };
      at += length;
    }
  } catch {
    // A reply cut short: rcode only.
  }
  return { rcode, address: undefined };
}

class UdpAsker {
  private readonly socket = createSocket('udp4');
  private readonly waiting = new Map<number, (reply: Reply | null) => void>();
  private readonly port: number;
  private id = 0;

  constructor(port: number) {
    this.port = port;
    this.socket.on('message', (msg) => {
      if (msg.length < 12) return;
      const done = this.waiting.get(msg.readUInt16BE(0));
      if (done !== undefined) done(decodeReply(msg));
    });
    this.socket.unref();
  }

  /** One A query; null when nothing came back within `timeoutMs`. */
  ask(name: string, timeoutMs: number): Promise<Reply | null> {
    do this.id = (this.id + 1) & 0xffff;
    while (this.waiting.has(this.id));
    const id = this.id;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(null), timeoutMs);
      const done = (reply: Reply | null) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(reply);
      };
      this.waiting.set(id, done);
      this.socket.send(encodeA(id, name), this.port, '127.0.0.1');
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** Asks `name` every PROBE_EVERY_MS until stopped; then waits out the last timeouts and sums the gaps. */
function startProber(port: number, name: string): { stop(): Promise<ProbeSummary> } {
  const asker = new UdpAsker(port);
  const probes: { sentAt: number; answered: Promise<boolean> }[] = [];
  const timer = setInterval(() => probes.push({ sentAt: performance.now(), answered: asker.ask(name, TIMEOUT_S * 1000).then((r) => r !== null) }), PROBE_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      const answered = await Promise.all(probes.map((p) => p.answered));
      asker.close();
      const s: ProbeSummary = { sent: probes.length, unanswered: 0, gaps: 0, maxGapMs: 0, totalGapMs: 0 };
      let gapStart = -1;
      const closeGap = (end: number) => {
        const ms = end - gapStart;
        s.gaps++;
        s.totalGapMs += ms;
        s.maxGapMs = Math.max(s.maxGapMs, ms);
        gapStart = -1;
      };
      for (let i = 0; i < probes.length; i++) {
        if (!answered[i]) {
          s.unanswered++;
          if (gapStart < 0) gapStart = probes[i].sentAt;
        } else if (gapStart >= 0) closeGap(probes[i].sentAt);
      }
      if (gapStart >= 0) closeGap(probes.at(-1)!.sentAt + PROBE_EVERY_MS);
      return s;
    },
  };
}

// ---- the nanny ----

interface NannyRun extends Running {
  configDir: string;
  /** Everything the nanny (and its child, prefixed) has written so far. */
  output(): string;
  /** When (performance.now()) the lines of a restart reached us, in order. */
  events: { event: RestartEvent; at: number }[];
}

type RestartEvent = 'stopping' | 'stopped' | 'started' | 'ready';

const count = (text: string, re: RegExp): number => [...text.matchAll(re)].length;

function writeConfigFile(configDir: string, name: string, text: string): void {
  const tmp = join(configDir, `.${name}.tmp`); // dot-names are skipped by the nanny's watcher
  writeFileSync(tmp, text);
  renameSync(tmp, join(configDir, name));
}

const stubDomains = (stubPort: number): string => JSON.stringify({ [STUB_DOMAIN]: [`127.0.0.1:${stubPort}`] });
const upstreams = (port: number | null): string => JSON.stringify(port === null ? [] : [`127.0.0.1:${port}`]);

/** The child's arguments, after the nanny's `--`: those of the other dnscache parts, plus the cluster route. */
function childArgs(forwarder: Forwarder, port: number, own: string, upstreamPort: number): string[] {
  const args = [
    '-k',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--cache-size=10000',
    '--log-facility=-',
    `--pid-file=${join(own, 'pid')}`,
    // With no upstreamNameservers the child reads a resolv file: an empty one keeps it off the network.
    `--resolv-file=${join(own, 'resolv.conf')}`,
    `--server=/cluster.local/127.0.0.1#${upstreamPort}`,
  ];
  return forwarder === 'dnsmasq' ? [...args, '--conf-file=/dev/null', '--no-hosts'] : [...args, ...oneThread()];
}

async function startNanny(dir: string, forwarder: Forwarder, upstreamPort: number): Promise<NannyRun> {
  const own = join(dir, `nanny-${forwarder}`);
  const configDir = join(own, 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(own, 'resolv.conf'), '');
  writeConfigFile(configDir, 'stubDomains', stubDomains(upstreamPort));
  writeConfigFile(configDir, 'upstreamNameservers', upstreams(upstreamPort));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...programArgs('dnsmasq-nanny'),
      `-configDir=${configDir}`,
      '-syncInterval=1s',
      '-metricsAddress=',
      ...(forwarder === 'dnsmasq' ? ['-dnsmasqExec=/usr/sbin/dnsmasq'] : []),
      '--',
      ...childArgs(forwarder, port, own, upstreamPort),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const events: NannyRun['events'] = [];
  const keep = (d: Buffer) => (out += d.toString());
  child.stdout!.on('data', keep);
  const marks: [RestartEvent, RegExp][] = [
    ['stopping', /stopping the child for a restart|stopping the old child/],
    ['stopped', /child stopped/],
    ['started', /child started pid=/],
    ['ready', CHILD_READY[forwarder]],
  ];
  createInterface({ input: child.stderr!, crlfDelay: Infinity }).on('line', (raw) => {
    const line = plainLine(raw); // the marks are read from plain lines, whichever log format
    out += line + '\n';
    const mark = marks.find(([, re]) => re.test(line));
    if (mark !== undefined) events.push({ event: mark[0], at: performance.now() });
  });
  const stopNanny = stopper(child);
  // The nanny stops its child; one it left behind (its command line names our directory) goes too.
  const stop = async () => {
    await stopNanny();
    if (LOGS !== undefined) {
      mkdirSync(LOGS, { recursive: true });
      writeFileSync(join(LOGS, `nanny-${forwarder}.log`), out);
    }
    for (const m of out.matchAll(CHILD_STARTED)) {
      try {
        if (readFileSync(`/proc/${m[1]}/cmdline`, 'utf8').includes(own)) process.kill(Number(m[1]), 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
  };
  try {
    await waitForLine(child, CHILD_READY[forwarder], `dnsmasq-nanny (${forwarder})`, 30_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { name: `nanny-${forwarder}`, port, pid: child.pid!, stop, configDir, output: () => out, events };
}

// ---- one run ----

/**
 * dnsperf's input: in every ten lines six cache hits (cluster names), two stub-domain names (a
 * hundred of them, cached until a SIGHUP clears the cache) and two never-asked names (one pass
 * over the file sends each once).
 */
function queryFile(path: string, clusterNames: string[], tag: string): void {
  const lines: string[] = [];
  const total = Math.ceil((RATE * SECONDS * 1.1) / 10) * 10;
  let hit = 0;
  let miss = 0;
  let stub = 0;
  for (let i = 0; i < total; i++) {
    const slot = i % 10;
    if (slot < 6) lines.push(`${clusterNames[hit++ % clusterNames.length]} A`);
    else if (slot < 8) lines.push(`s${stub++ % 100}.${STUB_DOMAIN} A`);
    else lines.push(`${tag}-${miss++}.${MISS_DOMAIN} A`);
  }
  writeFileSync(path, lines.join('\n') + '\n');
}

interface Change {
  files: Record<string, string>;
  /** A never-asked name under `domain` gets this answer once the change is in. */
  domain: string;
  expect: (r: Reply) => boolean;
}

/** The k-th change (1-based) of a path; an even number of them brings the config back to where it started. */
function change(path: ChangePath, k: number, upstreamPort: number, stubPortB: number): Change {
  const odd = k % 2 === 1;
  if (path === 'sighup') {
    const address = odd ? STUB_ADDRESS_B : STUB_ADDRESS_A;
    return { files: { stubDomains: stubDomains(odd ? stubPortB : upstreamPort) }, domain: STUB_DOMAIN, expect: (r) => r.address === address };
  }
  // Upstreams none: the child has no default server (its resolv file is empty) and refuses or fails the name.
  const expect = odd ? (r: Reply) => r.rcode !== 0 : (r: Reply) => r.address === MISS_ADDRESS;
  return { files: { upstreamNameservers: upstreams(odd ? null : upstreamPort) }, domain: MISS_DOMAIN, expect };
}

/** Writes the changes on schedule; each is checked with never-asked names until the next is due. */
async function applyChanges(nanny: NannyRun, path: ChangePath, tag: string, upstreamPort: number, stubPortB: number): Promise<number[]> {
  const start = performance.now();
  const asker = new UdpAsker(nanny.port);
  const applyMs: number[] = [];
  try {
    for (let k = 1; k <= CHANGES; k++) {
      await sleep(Math.max(0, start + LEAD_MS + (k - 1) * INTERVAL_MS - performance.now()));
      const c = change(path, k, upstreamPort, stubPortB);
      const written = performance.now();
      for (const [name, text] of Object.entries(c.files)) writeConfigFile(nanny.configDir, name, text);
      const due = written + INTERVAL_MS - 100;
      for (let attempt = 0; performance.now() < due; attempt++) {
        const reply = await asker.ask(`check-${tag}-${k}-${attempt}.${c.domain}`, 300);
        if (reply !== null && c.expect(reply)) {
          applyMs.push(performance.now() - written);
          break;
        }
        await sleep(50);
      }
    }
  } finally {
    asker.close();
  }
  return applyMs;
}

/** Pairs each `stopping` with the next `stopped`, and each `started` with the next `ready`. */
function restartTimes(events: NannyRun['events']): { stopMs: number[]; startMs: number[] } {
  const stopMs: number[] = [];
  const startMs: number[] = [];
  const open: Partial<Record<RestartEvent, number>> = {};
  for (const { event, at } of events) {
    if (event === 'stopping' || event === 'started') open[event] = at;
    else if (event === 'stopped' && open.stopping !== undefined) stopMs.push(at - open.stopping);
    else if (event === 'ready' && open.started !== undefined) startMs.push(at - open.started);
    if (event === 'stopped') delete open.stopping;
    if (event === 'ready') delete open.started;
  }
  return { stopMs, startMs };
}

async function oneRun(dir: string, nanny: NannyRun, forwarder: Forwarder, path: ChangePath, clusterNames: string[], upstreamPort: number, stubPortB: number): Promise<ConfigRun> {
  const tag = `${path}-${Date.now().toString(36)}`;
  const queries = join(dir, `queries-${forwarder}-${path}`);
  queryFile(queries, clusterNames, tag);
  const logBefore = nanny.output();
  const eventsBefore = nanny.events.length;
  const prober = startProber(nanny.port, clusterNames[0]);
  const perf = runLoad(nanny.port, queries, SECONDS);
  const applyMs = path === 'baseline' ? [] : await applyChanges(nanny, path, tag, upstreamPort, stubPortB);
  const result = await perf;
  const probes = await prober.stop();
  rmSync(queries, { force: true });
  const log = nanny.output().slice(logBefore.length);
  const { stopMs, startMs } = restartTimes(nanny.events.slice(eventsBefore));
  const run: ConfigRun = {
    forwarder,
    path,
    changes: path === 'baseline' ? 0 : CHANGES,
    verified: applyMs.length,
    applyMs,
    // The upstreams flip: a restart for dnsmasq, a SIGHUP for dnscache; either is the change applied.
    logged: path === 'baseline' ? 0 : count(log, LOGGED_RELOAD) + count(log, LOGGED_RESTART),
    childStarts: count(log, CHILD_STARTED),
    unexpectedExits: count(log, UNEXPECTED_EXIT),
    perf: result,
    stopMs,
    startMs,
    lostOverBaseline: 0,
    probes,
  };
  console.log(
    `  ${forwarder} ${path}: ${run.verified}/${run.changes} changes seen, ${run.logged} logged; ${result.sent} sent, ${result.lost} lost, not NOERROR: ${notNoerror(result)}; prober ${probes.unanswered}/${probes.sent} unanswered, longest gap ${probes.maxGapMs.toFixed(0)} ms`,
  );
  return run;
}

/** Runs part 3 in `dir` (its own upstreams and nannies, all stopped before it returns). */
export async function benchConfigChanges(dir: string): Promise<ConfigResults> {
  const own = join(dir, 'config-changes');
  mkdirSync(own, { recursive: true });
  const c = makeCluster(NAMES);
  const hosts = join(own, 'hosts');
  writeFileSync(hosts, c.hosts);
  writeFileSync(join(own, 'no-hosts'), '');
  const clusterNames = c.queries.trim().split('\n').map((l) => l.split(' ')[0]);
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`  config changes (load ${load}): ${CHANGES} per path every ${INTERVAL_MS} ms, dnsperf -Q ${RATE} for ${SECONDS}s per run`);
  const started: Running[] = [];
  const start = async <T extends Running>(s: Promise<T>): Promise<T> => {
    const running = await s;
    started.push(running);
    return running;
  };
  try {
    // A: cluster names (hosts), misses and the stub domain; B: the stub domain's other server. All cacheable.
    const dirA = join(own, 'upstream-a');
    const dirB = join(own, 'upstream-b');
    mkdirSync(dirA);
    mkdirSync(dirB);
    const upstreamA = await start(startDnsmasq(dirA, hosts, await freePort(), ['--local-ttl=3600', `--address=/${MISS_DOMAIN}/${MISS_ADDRESS}`, `--address=/${STUB_DOMAIN}/${STUB_ADDRESS_A}`]));
    const upstreamB = await start(startDnsmasq(dirB, join(own, 'no-hosts'), await freePort(), ['--local-ttl=3600', `--address=/${STUB_DOMAIN}/${STUB_ADDRESS_B}`]));
    const nannies = {} as Record<Forwarder, NannyRun>;
    for (const f of FORWARDERS) nannies[f] = await start(startNanny(own, f, upstreamA.port));

    // An untimed run each: caches filled, dnscache's paths compiled.
    for (const f of FORWARDERS) {
      const warm = join(own, `warm-${f}`);
      queryFile(warm, clusterNames, `warm-${Date.now().toString(36)}`);
      await runLoad(nannies[f].port, warm, 3);
      rmSync(warm);
    }

    const runs: ConfigRun[] = [];
    for (const path of PATHS) for (const f of FORWARDERS) runs.push(await oneRun(own, nannies[f], f, path, clusterNames, upstreamA.port, upstreamB.port));
    for (const r of runs) r.lostOverBaseline = r.perf.lost - runs.find((b) => b.forwarder === r.forwarder && b.path === 'baseline')!.perf.lost;
    const shown = childArgs('dnsmasq', 0, '<own>', 0)
      .join(' ')
      .replace('--port=0', '--port=<own>')
      .replace('#0', '#<upstream>');
    return { rate: RATE, seconds: SECONDS, changes: CHANGES, intervalMs: INTERVAL_MS, load, childArgs: shown, runs };
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

/** `REFUSED 12, SERVFAIL 3`, or 0. */
const notNoerror = (p: LoadResult): string =>
  Object.entries(p.rcodes)
    .filter(([code]) => code !== 'NOERROR')
    .map(([code, n]) => `${code} ${n}`)
    .join(', ') || '0';

const PATH_TITLE: Record<ChangePath, string> = {
  baseline: 'baseline (no change)',
  sighup: 'stub server swapped (servers-file + SIGHUP)',
  restart: 'upstreams none ↔ some (dnsmasq: restart; dnscache: SIGHUP)',
};

/** The markdown section for bench/results/dnscache-<date>.md. */
export function configReport(r: ConfigResults): string {
  const lines = [
    '## Queries lost while the config changes',
    '',
    `dnsmasq-nanny (built entry, production Node flags, \`-syncInterval=1s -metricsAddress=\`) supervising dnscache, and another supervising the real dnsmasq (\`-dnsmasqExec=/usr/sbin/dnsmasq\`); child args \`${r.childArgs}\` (dnscache without the last three). dnsperf -Q ${r.rate} -t ${TIMEOUT_S} for ${r.seconds} s per run; in every ten queries six cache hits, two of a hundred stub-domain names, two never-asked names. ${r.changes} changes per run, ${r.intervalMs / 1000} s apart from ${LEAD_MS / 1000} s in: the stub domain's server swapped between two upstream dnsmasqs (stubDomains rewritten: write + rename), or upstreamNameservers flipped between [] and one server. A change counts as seen once a never-asked name gets the new route's answer; "logged" counts the nanny's \`child reloaded (SIGHUP) … sighup=sent\` / \`command line changed: restarting the child\` lines. The prober asks one cluster name every ${PROBE_EVERY_MS} ms beside dnsperf; a gap runs from the first unanswered probe to the next answered one. With upstreams none the child has no default server, so never-asked names are answered REFUSED (dnsmasq) or SERVFAIL (dnscache) half the time on the restart path: expected, not a failure. Load average at the start of this part: ${r.load}; a baseline with lost queries or prober gaps means something else had the CPUs.`,
    '',
    '| forwarder | path | changes seen / logged | queries sent | lost | lost − baseline (goal 0 on SIGHUP) | answers not NOERROR | prober unanswered | gaps (longest, total) | change seen after (median, max) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  for (const run of r.runs) {
    const sorted = [...run.applyMs].sort((a, b) => a - b);
    const seen = run.path === 'baseline' ? '—' : `${run.verified}/${run.changes} / ${run.logged}`;
    const after = sorted.length === 0 ? '—' : `${ms(sorted[Math.floor(sorted.length / 2)])}, ${ms(sorted.at(-1)!)}`;
    const gaps = run.probes.gaps === 0 ? '0' : `${run.probes.gaps} (${ms(run.probes.maxGapMs)}, ${ms(run.probes.totalGapMs)})`;
    const delta = run.path === 'baseline' ? '—' : `**${run.lostOverBaseline}**`;
    lines.push(`| ${run.forwarder} | ${PATH_TITLE[run.path]} | ${seen} | ${run.perf.sent} | ${run.perf.lost} | ${delta} | ${notNoerror(run.perf)} | ${run.probes.unanswered}/${run.probes.sent} | ${gaps} | ${after} |`);
  }
  const restarts = r.runs.filter((x) => x.path === 'restart');
  if (restarts.length > 0) {
    const med = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
    const cell = (x: ConfigRun) => `${x.forwarder}: old child stopped ${ms(med(x.stopMs))} after SIGTERM, new child ready ${ms(med(x.startMs))} after its spawn (medians of ${x.stopMs.length} and ${x.startMs.length})`;
    lines.push('', `Where a restart's unanswered time goes (the nanny's lines, timed as they reached the benchmark) — ${restarts.map(cell).join('; ')}.`);
  }
  const odd = r.runs.filter((x) => x.unexpectedExits > 0 || (x.path !== 'baseline' && (x.verified < x.changes || x.logged < x.changes)));
  if (odd.length > 0) lines.push('', `Not every change took effect, or a child exited unexpectedly: ${odd.map((x) => `${x.forwarder} ${x.path} (${x.verified} seen, ${x.logged} logged, ${x.unexpectedExits} unexpected exits)`).join('; ')}.`);
  return lines.join('\n');
}

if (import.meta.main) {
  const dir = dnsmasqReadableDir('kdt-bench-config-');
  try {
    const r = await benchConfigChanges(dir);
    console.log('\n' + configReport(r) + '\n\n' + JSON.stringify(r, null, 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
