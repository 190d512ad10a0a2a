// The supervisor with real child processes (small Node scripts) and short backoffs: crash-loop
// detection, restarts that wait for the old child's port, SIGKILL after the grace period, SIGHUP held
// until the child is ready, its output passed on line by line.

import t from 'tap';
import type { Test } from 'tap';
import { createLogger, setSink } from '../../pkg/log/log.ts';
import { plainLine } from '../helpers/log-lines.ts';
import { Supervisor, stoppedCleanly } from '../../pkg/nanny/supervisor.ts';
import type { SupervisorOptions } from '../../pkg/nanny/supervisor.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/ports.ts';
import { isAlive } from '../helpers/nanny.ts';

// The supervisor's own log lines, kept for the assertions instead of cluttering the TAP output.
const logged: string[] = [];
setSink((line) => logged.push(plainLine(line)));

/** A supervisor of `node -e <script> <args...>`, stopped at teardown; its output lines collected. */
function supervise(t: Test, script: string, opts: Partial<SupervisorOptions> = {}) {
  const lines: string[] = [];
  const crashLoops: string[] = [];
  const sup = new Supervisor({
    command: { file: process.execPath, prefix: ['-e', script], name: 'kid', ready: /^ready/, serversFileNoResolv: false, stopCodes: [0], logging: [] },
    log: createLogger('test-supervisor'),
    output: (line) => lines.push(line),
    onCrashLoop: (reason) => crashLoops.push(reason),
    ...opts,
  });
  t.teardown(() => sup.stop());
  return { sup, lines, crashLoops };
}

t.test('a child that keeps failing: started again with backoff, then reported as a crash loop', async (t) => {
  const { sup, crashLoops } = supervise(t, 'process.exit(3)', { backoff: { initialMs: 20, maxMs: 40, maxFailures: 4, failureWindowMs: 60_000 } });
  sup.start([]);
  const reason = await eventually(() => crashLoops[0], 'the crash loop reported');
  t.match(reason, /failed 4 times within 60s, last: exit code 3/);
  t.equal(sup.stats.starts, 4);
  t.equal(sup.stats.exitRestarts, 3);
  t.notOk(sup.up);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(sup.stats.starts, 4, 'nothing started after giving up');
});

t.test('a program that cannot be started counts as a failure too', async (t) => {
  const lines: string[] = [];
  const crashLoops: string[] = [];
  const sup = new Supervisor({
    command: { file: '/nonexistent/dnsmasq', prefix: [], name: 'dnsmasq', ready: /./, serversFileNoResolv: false, stopCodes: [0], logging: [] },
    log: createLogger('test-supervisor'),
    output: (line) => lines.push(line),
    onCrashLoop: (reason) => crashLoops.push(reason),
    backoff: { initialMs: 10, maxFailures: 2 },
  });
  t.teardown(() => sup.stop());
  sup.start(['-k']);
  t.match(await eventually(() => crashLoops[0], 'the crash loop reported'), /failed 2 times.*could not start: spawn \/nonexistent\/dnsmasq ENOENT/);
  t.ok(logged.some((l) => /W test-supervisor: child exited unexpectedly how="could not start/.test(l)), 'each failed start logged');
});

t.test('a child that runs long enough resets the backoff; one that dies is started again', async (t) => {
  // Lives 150 ms (the reset threshold is 100 ms), so every exit waits only the initial delay.
  const { sup, crashLoops } = supervise(t, 'console.log("ready"); setTimeout(() => process.exit(1), 150)', {
    backoff: { initialMs: 30, maxMs: 10_000, resetAfterMs: 100, maxFailures: 100 },
  });
  sup.start([]);
  await eventually(() => sup.stats.exitRestarts >= 3, 'three restarts', 3000);
  t.same(crashLoops, []);
});

t.test('a restart waits for the old child to leave its port before starting the new one', async (t) => {
  const port = await freePort();
  // Takes 300 ms to close after SIGTERM; a new child started before that would get EADDRINUSE.
  const script = `
    const net = require('node:net');
    const [port, tag] = process.argv.slice(1);
    const s = net.createServer().listen(Number(port), '127.0.0.1', () => console.log('ready ' + tag));
    s.on('error', (e) => { console.log('bind failed ' + e.code); process.exit(1); });
    process.on('SIGTERM', () => setTimeout(() => s.close(() => process.exit(0)), 300));`;
  const { sup, lines } = supervise(t, script, { backoff: { maxFailures: 1 } });
  sup.start([String(port), 'one']);
  await eventually(() => lines.includes('ready one'), 'the first child listening');
  const first = sup.pid!;
  await sup.restart([String(port), 'two']);
  t.notOk(isAlive(first), 'the old child is gone when restart() returns');
  await eventually(() => lines.includes('ready two'), 'the second child listening on the same port');
  t.notOk(lines.some((l) => l.includes('bind failed')));
  t.equal(sup.stats.configRestarts, 1);
  t.equal(sup.stats.exitRestarts, 0);
  t.ok(stoppedCleanly(await sup.stop()), 'SIGTERM → exit 0');
});

t.test('a child that ignores SIGTERM is killed after the grace period, and that is not a clean stop', async (t) => {
  const { sup, lines } = supervise(t, 'process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000)', { killAfterMs: 200 });
  sup.start([]);
  await eventually(() => lines.includes('ready'), 'ready');
  const exit = await sup.stop();
  t.equal(exit?.killed, true);
  t.equal(exit?.signal, 'SIGKILL');
  t.notOk(stoppedCleanly(exit));
  t.equal(sup.stats.exitRestarts, 0, 'a stop is not a failure');
});

t.test('SIGHUP is held until the child is ready (before that it would kill a Node child)', async (t) => {
  const script = 'setTimeout(() => { process.on("SIGHUP", () => console.log("reloaded")); console.log("ready") }, 300); setInterval(() => {}, 1000)';
  const { sup, lines } = supervise(t, script);
  sup.start([]);
  t.equal(sup.reload(), 'deferred');
  await eventually(() => lines.includes('reloaded'), 'the held SIGHUP delivered once the child was ready');
  t.equal(sup.reload(), 'sent');
  await eventually(() => lines.filter((l) => l === 'reloaded').length === 2, 'a second SIGHUP');
  t.equal(sup.stats.reloads, 2);
  t.equal(sup.stats.exitRestarts, 0, 'the child never died');
});

t.test('stdout and stderr are passed on line by line', async (t) => {
  const { sup, lines } = supervise(t, 'process.stdout.write("ready\\nout two\\n"); process.stderr.write("err one\\nerr"); setTimeout(() => process.stderr.write(" two\\n"), 50); setInterval(() => {}, 1000)');
  sup.start([]);
  await eventually(() => lines.includes('err two'), 'the split line joined');
  t.ok(lines.includes('ready'));
  t.ok(lines.includes('out two'));
  t.ok(lines.includes('err one'));
});

t.test('no child: reload and signals do nothing, stop returns null', async (t) => {
  const { sup } = supervise(t, 'console.log("ready")');
  t.equal(sup.reload(), 'no child');
  t.equal(sup.signal('SIGUSR1'), false);
  t.equal(await sup.stop(), null);
  t.ok(stoppedCleanly(null));
  sup.start([]);
  t.notOk(sup.up, 'nothing starts after stop');
});
