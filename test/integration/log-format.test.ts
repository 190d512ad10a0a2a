// The four programs' real output, read raw: klog text by default (`I1124 00:57:25.778123 <pid>
// <file>:<line>] "msg" key="value"`), the Kubernetes JSON form with --logging-format=json (ts, caller,
// msg, v or err), --v honoured as klog's V(n), and the nanny's stream one format with its child's
// lines in it (dnscache's entries as they are, dnsmasq's lines made entries).

import t from 'tap';
import type { Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dig } from '../helpers/dig.ts';
import { parseLogLine } from '../helpers/log-lines.ts';
import type { LogEntry } from '../helpers/log-lines.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import { startNanny } from '../helpers/nanny.ts';
import { freePort } from '../helpers/ports.ts';
import { repoRoot, startProgram } from '../helpers/process.ts';
import { startSidecar } from '../helpers/sidecar.ts';

const CLUSTER = readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8');

/** Every source file by base name: a caller `program.ts:81` must name a line that logs. */
const sources = new Map<string, string[][]>();
for (const top of ['pkg', 'cmd']) {
  for (const rel of readdirSync(join(repoRoot, top), { recursive: true }) as string[]) {
    if (!rel.endsWith('.ts')) continue;
    const base = rel.split('/').pop()!;
    sources.set(base, [...(sources.get(base) ?? []), readFileSync(join(repoRoot, top, rel), 'utf8').split('\n')]);
  }
}
const LOGS = /\.(info|warn|error|debug|relay)\(/;

function callerLogs(caller: string): boolean {
  const [file, line] = caller.split(':');
  return (sources.get(file) ?? []).some((lines) => LOGS.test(lines[Number(line) - 1] ?? ''));
}

/** Every line of `raw` read as an entry of `format`: the test fails on any other line. */
function entries(t: Test, raw: string, format: 'text' | 'json'): LogEntry[] {
  const out: LogEntry[] = [];
  const bad: string[] = [];
  for (const line of raw.split('\n')) {
    if (line === '') continue;
    const e = parseLogLine(line);
    let ok = e !== undefined && e.format === format && e.prefix === '';
    if (ok && format === 'json') {
      const o = JSON.parse(line) as Record<string, unknown>;
      // component-base's order, and v for info or err for an error
      ok = Object.keys(o).slice(0, 4).join() === 'ts,logger,caller,msg' && ('v' in o || 'err' in o);
    }
    if (ok) out.push(e!);
    else bad.push(line);
  }
  t.same(bad, [], `every line is a ${format} entry`);
  t.ok(out.length > 0, 'some entries');
  t.same(out.filter((e) => Math.abs(Date.now() - e.ts) > 120_000).map((e) => e.msg), [], 'every entry is timed now');
  t.same(out.filter((e) => !callerLogs(e.caller)).map((e) => `${e.caller} ${e.msg}`), [], 'every caller is a line that logs');
  return out;
}

const find = (es: LogEntry[], msg: RegExp) => es.find((e) => msg.test(e.msg));

t.test('kube-dns: klog text by default; --v=2 adds the V(2) lines', async (t) => {
  const quiet = await startKubeDns(t, { clusterYaml: CLUSTER, args: ['--logtostderr'] });
  const verbose = await startKubeDns(t, { clusterYaml: CLUSTER, args: ['--v=2'] });
  await verbose.program.waitFor(/records rebuilt/);
  const q = entries(t, quiet.program.rawOutput(), 'text');
  const v = entries(t, verbose.program.rawOutput(), 'text');
  const sync = find(q, /^initial sync done/)!;
  t.match(sync, { severity: 'I', logger: 'kube-dns', pid: quiet.program.child.pid, fields: { services: Number } });
  t.match(quiet.program.rawOutput(), /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ exit\.ts:\d+\] "ignoring flags kept only for compatibility with the original manifests" logger="flags" flags="--logtostderr=true"$/m);
  t.match(quiet.program.rawOutput(), / address="127\.0\.0\.1" port=\d+ /, 'strings quoted, numbers bare');
  t.notOk(find(q, /^records rebuilt/), 'no V(2) line at --v=0');
  t.match(find(v, /^records rebuilt/), { severity: 'I', fields: { serial: Number } }, 'V(2) at --v=2, written as I');
  t.notMatch(verbose.program.rawOutput(), /^D/m, 'no D level');
});

t.test('kube-dns --logging-format=json: component-base JSON, v for each info line', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: CLUSTER, args: ['--logging-format=json', '--v=2', '--logtostderr'] });
  await kd.program.waitFor(/records rebuilt/);
  const es = entries(t, kd.program.rawOutput(), 'json');
  t.match(find(es, /^initial sync done/), { v: 0, logger: 'kube-dns' });
  t.match(find(es, /^records rebuilt/), { v: 2 });
  t.match(find(es, /^ignoring flags/), { v: 0, logger: 'flags', fields: { flags: '--logtostderr=true' } }, 'the first entry is JSON too');
});

t.test('an error entry: E with err (text), err and no v (JSON)', async (t) => {
  const taken = await startSidecar(t, []);
  for (const format of ['text', 'json'] as const) {
    const p = startProgram(t, 'sidecar', ['--prometheus-addr=127.0.0.1', `--prometheus-port=${taken.port}`, `--logging-format=${format}`]);
    t.equal(await p.exited, 1);
    const e = find(entries(t, p.rawOutput(), format), /^cannot start/)!;
    t.match(e, { severity: 'E', logger: 'sidecar', fields: { err: /EADDRINUSE/ } }, format);
    if (format === 'json') t.equal(e.v, undefined, 'an error entry has no v');
  }
});

t.test('the sidecar: text and JSON, --v=4 adds its probe lines', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: CLUSTER });
  const probe = `--probe=kubedns,127.0.0.1:${kd.dnsPort},kubernetes.default.svc.cluster.local,1s,SRV`;
  const text = await startSidecar(t, [probe]);
  const json = await startSidecar(t, [probe, '--logging-format=json', '--v=4']);
  await json.program.waitFor(/probe done/);
  t.notOk(find(entries(t, text.program.rawOutput(), 'text'), /^probe done/), 'V(4) not at --v=0');
  t.match(find(entries(t, json.program.rawOutput(), 'json'), /^probe done/), { v: 4, logger: 'sidecar/probe/kubedns', fields: { ok: true } });
});

t.test('dnscache alone: text and JSON; --v=1 adds its forwarding failures', async (t) => {
  const closed = await freePort(); // nothing listens: every forward fails
  const start = (extra: string[]) =>
    startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', `--server=127.0.0.1#${closed}`, '--log-facility=-', ...extra]);
  const quiet = start([]);
  const json = start(['--logging-format=json', '--v=1']);
  const ports = await Promise.all([quiet, json].map(async (p) => Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1])));
  await Promise.all(ports.map((port) => dig(port, 'nowhere.example', 'A', ['+time=8', '+tries=1'])));
  await json.waitFor(/forwarding failed/);
  t.notOk(find(entries(t, quiet.rawOutput(), 'text'), /^forwarding failed/), 'V(1) not at --v=0');
  t.match(find(entries(t, json.rawOutput(), 'json'), /^forwarding failed/), { v: 1, logger: 'dnscache', fields: { name: 'nowhere.example', err: /no upstream answered/ } });
});

t.test("the nanny's stream is one format, its child's lines in it", async (t) => {
  await t.test('dnscache, text: its entries passed on as they are, with its own pid', async (t) => {
    const n = await startNanny(t);
    const es = entries(t, n.program.rawOutput(), 'text');
    const listening = find(es, /^listening$/)!;
    t.match(listening, { logger: 'dnscache', pid: n.childPids()[0] });
    t.match(find(es, /^child started$/), { logger: 'dnsmasq-nanny/dnscache', pid: n.program.child.pid });
  });
  await t.test('dnscache, JSON on both sides of --', async (t) => {
    const n = await startNanny(t, { flags: ['-logging-format=json'], childArgs: ['--logging-format=json'] });
    const es = entries(t, n.program.rawOutput(), 'json');
    t.match(find(es, /^listening$/), { logger: 'dnscache', v: 0 });
  });
  await t.test("dnscache, the nanny's --logging-format alone: the child writes the nanny's format, at its own verbosity", async (t) => {
    const n = await startNanny(t, { flags: ['-logging-format=json', '--v=2'] });
    const es = entries(t, n.program.rawOutput(), 'json');
    t.match(find(es, /^listening$/), { logger: 'dnscache', v: 0 }, 'an entry of its own, not a line wrapped as a message');
    const started = find(es, /^child started$/)!;
    t.match(started, { logger: 'dnsmasq-nanny/dnscache', fields: { command: / --logging-format=json$/ } }, 'given the format');
    t.notMatch(started.fields.command, /--v/, 'not the manifest\'s -v=2: that would log every failed query');
  });
  await t.test("real dnsmasq, JSON: dnsmasq's own lines become entries", async (t) => {
    const n = await startNanny(t, { child: 'dnsmasq', flags: ['-logging-format=json'] });
    const es = entries(t, n.program.rawOutput(), 'json');
    t.match(find(es, /^dnsmasq\[\d+\]: started, version/), { logger: 'dnsmasq-nanny/dnsmasq', v: 0, caller: /^supervisor\.ts:\d+$/ });
  });
});
