// Starting and stopping the local pod: a taken port or a bad flag stops the launcher before anything
// runs; Ctrl-C (SIGINT to the terminal's whole process group) stops everything; and the real
// `npm start` (after `npm run build`, as `npm ci` runs it) answers on 127.0.0.1:1053 and leaves nothing
// behind on SIGTERM.

import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import type { Test } from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePorts, portFlags, startGroup, startedPids } from '../helpers/localpod.ts';
import type { GroupRun } from '../helpers/localpod.ts';
import { isAlive } from '../helpers/nanny.ts';
import { repoRoot, startProgram } from '../helpers/process.ts';
import { get, healthcheck } from '../helpers/sidecar.ts';

const run = promisify(execFile);
const KUBERNETES = 'kubernetes.default.svc.cluster.local';

/** An empty resolv.conf: nothing is forwarded past 127.0.0.1. */
function emptyResolvConf(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-localpod-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'resolv.conf');
  writeFileSync(path, '');
  return path;
}

/** The launcher's pid and every child pid it or the nanny logged. */
function podPids(g: GroupRun): number[] {
  const launcher = /local-pod: the pod is up pid=(\d+)/.exec(g.output());
  return [...(launcher ? [Number(launcher[1])] : []), ...startedPids(g.output()).map((s) => s.pid)];
}

t.test('a taken port: exit 1 naming the port and the flag that moves it; nothing started', async (t) => {
  const ports = await freePorts();
  const tcp = createServer();
  await new Promise<void>((resolve) => tcp.listen(ports.sidecar, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => tcp.close(() => resolve())));
  const udp = createSocket('udp4');
  await new Promise<void>((resolve) => udp.bind(ports.dns, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => udp.close(resolve)));

  const p = startProgram(t, 'local-pod', [...portFlags(ports), `--resolv-conf=${emptyResolvConf(t)}`]);
  t.equal(await p.exited, 1);
  t.match(p.output(), `127.0.0.1:${ports.sidecar}/tcp for sidecar (HTTP) is in use: free it or pick another port with --sidecar-port=`);
  t.match(p.output(), `127.0.0.1:${ports.dns}/udp for dnscache (DNS for clients) is in use: free it or pick another port with --dns-port=`);
  t.notMatch(p.output(), /child started/, 'nothing was started');
  t.notMatch(p.output(), new RegExp(`:${ports.kubedns}/`), 'the free ports are not reported');
});

t.test('bad flags: exit 2 naming the problem', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--dns-port=0'], /local-pod: invalid value "0" for flag --dns-port: must be 1-65535/],
    [['--dns-port=10053'], /--dns-port and --kubedns-port are both 10053/],
    [['--cluster-file=/nonexistent/cluster.yaml'], /--cluster-file \/nonexistent\/cluster\.yaml does not exist/],
    [['--probe-interval=0s'], /--probe-interval.*must be positive/],
    [['--no-such-flag'], /no-such-flag/],
  ];
  await Promise.all(
    cases.map(async ([args, message]) => {
      const p = startProgram(t, 'local-pod', args);
      t.equal(await p.exited, 2, args.join(' '));
      t.match(p.output(), message, args.join(' '));
      t.notMatch(p.output(), /child started/, `${args.join(' ')}: nothing started`);
    }),
  );
});

t.test('Ctrl-C (SIGINT to the whole process group): exit 0, every process gone', async (t) => {
  const ports = await freePorts();
  const g = startGroup(t, process.execPath, ['cmd/local-pod/main.ts', ...portFlags(ports), `--resolv-conf=${emptyResolvConf(t)}`]);
  await g.waitFor(/The kube-dns pod is running/);
  t.same(answers(await dig(ports.dns, KUBERNETES)), ['10.96.0.1']);
  const pids = podPids(g);
  t.equal(pids.length, 5, 'the launcher, kube-dns, the nanny, dnscache, the sidecar');
  process.kill(-g.pid, 'SIGINT');
  const exit = await g.exited;
  // Which program did not stop cleanly, when one did not (once in a full CI run: exit 1 after ~14 s).
  const stops = exit.code === 0 ? '' : `:\n${g.output().split('\n').filter((l) => /stop|exit|kill/i.test(l)).slice(-12).join('\n')}`;
  t.same(exit, { code: 0, signal: null }, `exit 0${stops}`);
  t.same(pids.filter(isAlive), [], 'no process left');
});

t.test('npm start: the pod on the issue\'s ports; SIGTERM stops it with exit 0 and nothing left', async (t) => {
  await run('npm', ['run', 'build'], { cwd: repoRoot, timeout: 180_000 });
  const g = startGroup(t, 'npm', ['start']);
  await g.waitFor(/The kube-dns pod is running/).catch((err: Error) => {
    throw new Error(`npm start did not come up; it needs 127.0.0.1:1053, 10053, 8081, 10054 and 10056 free on this machine.\n${err.message}`);
  });
  t.same(answers(await dig(1053, KUBERNETES)), ['10.96.0.1'], 'dig @127.0.0.1 -p 1053');
  t.same(answers(await dig(10053, KUBERNETES)), ['10.96.0.1'], 'kube-dns on 10053');
  t.equal((await get(8081, '/readiness')).status, 200, 'kube-dns readiness on 8081');
  t.match((await get(10056, '/metrics')).body, /^dnsmasq_nanny_child_up 1$/m, 'the nanny on 10056');
  await eventually(async () => (await healthcheck(10054, 'dnsmasq')).status === 200, 'the sidecar on 10054: dnsmasq probe passing', 15_000);
  t.match(g.output(), /node_modules\/node\/bin\/node --max-semi-space-size=2 --optimize-for-size \S+\/dist\/cmd\/kube-dns\/main\.js/, 'the built programs, with the production Node flags');

  const pids = podPids(g);
  t.equal(pids.length, 5, 'the launcher, kube-dns, the nanny, dnscache, the sidecar');
  const before = g.output().length;
  process.kill(g.pid, 'SIGTERM');
  // On failure, only what the pod printed from the SIGTERM on: why a program did not stop cleanly.
  t.same(await g.exited, { code: 0, signal: null }, 'npm exits 0', { output: g.output().slice(before) });
  t.same(pids.filter(isAlive), [], 'no process left');
});
