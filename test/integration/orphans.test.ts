// No process left behind: a program whose supervisor dies (kill -9 of the npm start launcher, or of
// dnsmasq-nanny), even while it still starts, notices and stops in order, and a nanny whose output pipe is gone (its reader
// died) still stops its child and removes its temp dir on SIGTERM.

import t from 'tap';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { eventually } from '../helpers/eventually.ts';
import { startLocalPod } from '../helpers/localpod.ts';
import { isAlive, startNanny } from '../helpers/nanny.ts';

const serversDir = (output: string): string => dirname(/--servers-file=([^\s"]+)/.exec(output)![1]);

t.test('kill -9 of the launcher: all four programs stop by themselves, the nanny removes its temp dir', async (t) => {
  const pod = await startLocalPod(t);
  const pids = pod.childPids();
  t.equal(pids.length, 4, 'kube-dns, dnsmasq-nanny, sidecar, dnscache');
  const dir = serversDir(pod.program.output());
  t.ok(existsSync(dir));
  process.kill(pod.program.child.pid!, 'SIGKILL');
  await eventually(() => pids.every((pid) => !isAlive(pid)), 'every program gone', 8000);
  t.notOk(existsSync(dir), "the nanny's temp dir is removed");
});

t.test('kill -9 of the nanny: its dnscache stops by itself', async (t) => {
  const n = await startNanny(t);
  const [child] = n.childPids();
  process.kill(n.program.child.pid!, 'SIGKILL');
  await eventually(() => !isAlive(child), 'dnscache gone', 8000);
  t.pass('no dnscache left serving');
});

t.test('kill -9 of the nanny while its dnscache still starts: it stops by itself all the same', async (t) => {
  const n = await startNanny(t, { ready: false });
  const child = Number((await n.program.waitFor(/child started pid=(\d+)/))[1]);
  process.kill(n.program.child.pid!, 'SIGKILL');
  await eventually(() => !isAlive(child), 'dnscache gone', 8000);
  t.pass('no dnscache left serving');
});

t.test('SIGTERM to a nanny whose output nobody reads any more: the child is still stopped, the temp dir removed', async (t) => {
  const n = await startNanny(t);
  const [child] = n.childPids();
  const dir = serversDir(n.program.output());
  // The reader of its stdout and stderr goes away, as when the launcher dies.
  n.program.child.stdout!.destroy();
  n.program.child.stderr!.destroy();
  n.program.child.kill('SIGTERM');
  await n.program.exited;
  await eventually(() => !isAlive(child), 'dnscache gone', 8000);
  t.notOk(existsSync(dir), 'the temp dir is removed');
});
