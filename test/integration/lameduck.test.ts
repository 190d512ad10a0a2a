// SIGTERM as the kubelet sends it: every program of the pod turns unready at once and keeps serving for
// its --lameduck time, then stops as before (exit 0). SIGINT (a terminal's Ctrl-C) stops at once, also
// in the middle of a lame duck. Why: manifests/README.md, "Rollouts".

import t from 'tap';
import type { Test } from 'tap';
import { answers, dig } from '../helpers/dig.ts';
import { eventually } from '../helpers/eventually.ts';
import { service, startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import { startNanny } from '../helpers/nanny.ts';
import type { Program } from '../helpers/process.ts';
import { get, healthcheck, startSidecar } from '../helpers/sidecar.ts';

const LAME_DUCK_MS = 2000;
const web = yamlDocs(service('default', 'web', 'clusterIP: 10.96.0.5\nports:\n- {name: http, port: 80}'));

/**
 * SIGTERM, then: `unready` (null: a program with no readiness) holds within half a second; `serving` holds three quarters into the lame
 * duck; the program exits 0, not before the lame duck is over.
 */
async function lameDuck(t: Test, program: Program, unready: (() => Promise<boolean>) | null, serving: () => Promise<boolean>): Promise<void> {
  const sent = Date.now();
  program.child.kill('SIGTERM');
  if (unready !== null) {
    await eventually(unready, 'unready after SIGTERM', 500);
    t.pass(`unready ${Date.now() - sent} ms after SIGTERM`);
  }
  await new Promise((r) => setTimeout(r, LAME_DUCK_MS * 0.75 - (Date.now() - sent)));
  t.ok(await serving(), `still serving ${Date.now() - sent} ms after SIGTERM`);
  t.equal(await program.exited, 0, 'exit 0');
  t.ok(Date.now() - sent >= LAME_DUCK_MS, `exited after the lame duck (${Date.now() - sent} ms)`);
  t.match(program.output(), /lame duck: unready, still serving .*for=2000ms/);
}

t.test('kube-dns: /readiness 503 at once, answers for --lameduck, then exits 0', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: web, args: [`--lameduck=${LAME_DUCK_MS}ms`] });
  t.equal((await get(kd.httpPort, '/readiness')).status, 200);
  await lameDuck(
    t,
    kd.program,
    async () => {
      const r = await get(kd.httpPort, '/readiness');
      return r.status === 503 && r.body === 'shutting down (lame duck)\n';
    },
    async () => answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')).join() === '10.96.0.5' && (await get(kd.httpPort, '/healthz')).status === 200,
  );
});

t.test('dnsmasq-nanny: /readiness follows its child, 503 at SIGTERM while the child answers for -lameduck', async (t) => {
  const nanny = await startNanny(t, { flags: [`-lameduck=${LAME_DUCK_MS}ms`] });
  t.equal((await get(nanny.metricsPort, '/readiness')).body, 'ok\n', 'ready once dnscache said it listens');
  const answering = () => dig(nanny.dnsPort, 'nothing.invalid', 'A', ['+time=1']).then(() => true, () => false);
  await lameDuck(
    t,
    nanny.program,
    async () => {
      const r = await get(nanny.metricsPort, '/readiness');
      return r.status === 503 && r.body === 'shutting down (lame duck)\n';
    },
    answering,
  );
  t.notOk(await answering(), 'the child is gone with it');
});

t.test('dnsmasq-nanny: /readiness 503 while no child runs', async (t) => {
  const nanny = await startNanny(t, { childArgs: ['--no-such-flag'], ready: false });
  const r = await eventually(async () => {
    const reply = await get(nanny.metricsPort, '/readiness');
    return reply.status === 503 && reply;
  }, 'unready', 3000);
  t.equal(r.body, 'dnscache is not running\n');
});

t.test('sidecar: probes and health checks go on for --lameduck', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: web });
  const sc = await startSidecar(t, [`--lameduck=${LAME_DUCK_MS}ms`, `--probe=kubedns,127.0.0.1:${kd.dnsPort},web.default.svc.cluster.local,100ms,A`]);
  await eventually(async () => (await healthcheck(sc.port, 'kubedns')).json.IsOk, 'the probe succeeds', 3000);
  await lameDuck(
    t,
    sc.program,
    null, // the sidecar has no readiness of its own
    async () => (await healthcheck(sc.port, 'kubedns')).json.IsOk && (await get(sc.port, '/metrics')).status === 200,
  );
});

t.test('SIGINT ends a lame duck at once; a second SIGTERM does not', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: web, args: ['--lameduck=30s'] });
  kd.program.child.kill('SIGTERM');
  await kd.program.waitFor(/lame duck: unready/);
  kd.program.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(kd.program.child.exitCode, null, 'still serving after a second SIGTERM');
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.5']);
  const sent = Date.now();
  kd.program.child.kill('SIGINT');
  t.equal(await kd.program.exited, 0);
  t.ok(Date.now() - sent < 5000, `stopped ${Date.now() - sent} ms after SIGINT`);
  t.match(kd.program.output(), /shutting down signal=SIGINT/);
});

t.test('--lameduck=0s: SIGTERM stops at once, as before', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: web, args: ['--lameduck=0s'] });
  kd.program.child.kill('SIGTERM');
  t.equal(await kd.program.exited, 0);
  t.notMatch(kd.program.output(), /lame duck/);
  t.match(kd.program.output(), /shutting down signal=SIGTERM/);
});

t.test('a negative --lameduck is a usage error', async (t) => {
  const kd = startKubeDns(t, { clusterYaml: web, args: ['--lameduck=-1s'] });
  await t.rejects(kd, /exited/);
});
