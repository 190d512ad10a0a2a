// The real sidecar program probing a real kube-dns (a cluster file) on 127.0.0.1: /healthcheck/<label>
// before and after the first probe, following kube-dns down and back up, failures counted, the
// metrics under the original's names, flags, and SIGTERM.

import t from 'tap';
import { Packet } from 'dns2';
import { eventually } from '../helpers/eventually.ts';
import { service, startKubeDns, yamlDocs } from '../helpers/kubedns.ts';
import { makeAnswer } from '../helpers/packets.ts';
import { freePort } from '../helpers/ports.ts';
import { startProgram } from '../helpers/process.ts';
import { get, healthcheck, sample, scrape, startSidecar } from '../helpers/sidecar.ts';
import type { Health } from '../helpers/sidecar.ts';
import { blackhole, udpUpstream } from '../helpers/upstreams.ts';

const cluster = yamlDocs(service('default', 'kubernetes', `
clusterIP: 10.96.0.1
ports:
- {name: https, port: 443, protocol: TCP}`));
const NAME = 'kubernetes.default.svc.cluster.local';

/** A port nothing listens on: the statistics poller's target when a test is about probes only. */
async function noStats(): Promise<string> {
  return `--dnsmasq-port=${await freePort()}`;
}

/** The healthcheck once `ok` accepts it. */
function healthWhen(port: number, label: string, ok: (h: Health) => boolean, what: string): Promise<Health> {
  return eventually(async () => {
    const h = await healthcheck(port, label);
    return ok(h) && h;
  }, what);
}

t.test('503 "waiting for first probe" until the first probe ends, then 200 with the JSON; type A by default', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  // A scripted server that answers only when the test says so: the first probe cannot end before that.
  const types: number[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held = await udpUpstream(t, (msg, _r, send) => {
    types.push(Packet.parse(msg).questions[0].type);
    void released.then(() => send(makeAnswer(msg, { addresses: ['192.0.2.1'] })));
  });
  const sc = await startSidecar(t, [
    `--probe=held,127.0.0.1:${held.port},held.example,30`, // 30 s: its timeout is 5 s, far beyond this test's wait
    `--probe=kubedns,127.0.0.1:${kd.dnsPort},${NAME},1,SRV`, // the manifest's probe, with a 1 s interval
    `--probe=plain,127.0.0.1:${kd.dnsPort},${NAME},1`,
    await noStats(),
  ]);

  const waiting = await healthcheck(sc.port, 'held');
  t.same({ status: waiting.status, type: waiting.type, body: waiting.body }, { status: 503, type: 'application/json', body: '{"IsOk":false,"LatencySeconds":0,"Err":"waiting for first probe"}' });

  for (const label of ['kubedns', 'plain']) {
    const ok = await healthWhen(sc.port, label, (h) => h.status === 200, `${label} passes`);
    t.equal(ok.type, 'application/json');
    t.match(ok.body, /^\{"IsOk":true,"LatencySeconds":\d+(\.\d+)?(e-\d+)?,"Err":""\}$/, `${label}: the original's fields, in its order`);
    t.ok(ok.json.LatencySeconds > 0, 'a latency');
  }
  t.equal((await healthcheck(sc.port, 'held')).json.Err, 'waiting for first probe', 'held: still no reply, still waiting');

  release();
  const held200 = await healthWhen(sc.port, 'held', (h) => h.status === 200, 'held passes once answered');
  t.equal(held200.json.IsOk, true);
  t.equal(types[0], 1, 'no type given: A (the original asked ANY, which kube-dns refuses)');

  const m = await scrape(sc.port);
  t.ok(sample(m, 'kubedns_probe_kubedns_latency_ms_count') >= 1, 'latency observed (histogram)');
  t.equal(sample(m, 'kubedns_probe_kubedns_latency_ms_bucket{le="8192"}'), sample(m, 'kubedns_probe_kubedns_latency_ms_count'), 'the original\'s buckets, up to 8192 ms');
  t.ok(m.has('kubedns_probe_kubedns_latency_ms_bucket{le="0.25"}'), 'from 0.25 ms');
  t.equal(sample(m, 'kubedns_probe_kubedns_errors'), 0);
  t.equal(sample(m, 'kubedns_probe_kubedns_up'), 1);
  t.equal(sample(m, 'kubedns_probe_kubedns_last_rcode'), 0);
});

t.test('kube-dns stopped: 503 within a couple of probes; started again: 200', async (t) => {
  // Started again on its port: a port from freePort, which no client socket can take meanwhile.
  const kd = await startKubeDns(t, { clusterYaml: cluster, args: [`--dns-port=${await freePort()}`] });
  const sc = await startSidecar(t, [`--probe=kubedns,127.0.0.1:${kd.dnsPort},${NAME},1`, await noStats()]);
  await healthWhen(sc.port, 'kubedns', (h) => h.status === 200, 'ok while kube-dns runs');

  t.equal(await kd.program.stop(), 0, 'kube-dns stopped');
  const refused = `udp 127.0.0.1:${kd.dnsPort}: connection refused`;
  const down = await healthWhen(sc.port, 'kubedns', (h) => h.status === 503 && h.json.Err === refused, '503 naming the refusal');
  t.same(down.json, { IsOk: false, LatencySeconds: 0, Err: refused });
  t.ok(sample(await scrape(sc.port), 'kubedns_probe_kubedns_errors') >= 1, 'counted as errors');
  t.equal(sample(await scrape(sc.port), 'kubedns_probe_kubedns_up'), 0);

  await startKubeDns(t, { clusterYaml: cluster, args: [`--dns-port=${kd.dnsPort}`] });
  const back = await healthWhen(sc.port, 'kubedns', (h) => h.status === 200, '200 once kube-dns is back');
  t.equal(back.json.Err, '');
  t.match(sc.program.output(), /W sidecar\/probe\/kubedns: probe failing err="udp 127\.0\.0\.1:\d+: connection refused"/);
  t.match(sc.program.output(), /I sidecar\/probe\/kubedns: probe ok again/);
});

t.test('NXDOMAIN, no answer records and no reply are failures, counted as errors', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  const silent = await blackhole(t);
  const sc = await startSidecar(t, [
    `--probe=nx,127.0.0.1:${kd.dnsPort},nothere.default.svc.cluster.local,1`,
    `--probe=empty,127.0.0.1:${kd.dnsPort},${NAME},1,AAAA`, // an IPv4-only service: NOERROR, no records
    `--probe=silent,127.0.0.1:${silent.port},${NAME},1`,
    `--probe=good,127.0.0.1:${kd.dnsPort},${NAME},1,A`,
    await noStats(),
  ]);
  const expected: Array<[string, string, number]> = [
    ['nx', `NXDOMAIN for domain "nothere.default.svc.cluster.local."`, 3],
    ['empty', `no RRs for domain "${NAME}."`, 0],
    ['silent', `udp 127.0.0.1:${silent.port}: no reply within 1000 ms`, -1],
  ];
  for (const [label, err] of expected) {
    const h = await healthWhen(sc.port, label, (h) => h.json.Err !== 'waiting for first probe', `${label} probed`);
    t.same({ status: h.status, json: h.json }, { status: 503, json: { IsOk: false, LatencySeconds: 0, Err: err } }, label);
  }
  await healthWhen(sc.port, 'good', (h) => h.status === 200, 'good passes');
  const m = await scrape(sc.port);
  for (const [label, , rcode] of expected) {
    t.ok(sample(m, `kubedns_probe_${label}_errors`) >= 1, `${label}: errors counted`);
    t.equal(sample(m, `kubedns_probe_${label}_latency_ms_count`), 0, `${label}: no latency observed for a failure`);
    t.equal(sample(m, `kubedns_probe_${label}_up`), 0);
    t.equal(sample(m, `kubedns_probe_${label}_last_rcode`), rcode, `${label}: last rcode`);
  }
  t.equal(sample(m, 'kubedns_probe_good_errors'), 0);
});

t.test('ANY is still sent when asked for; another namespace renames every metric', async (t) => {
  const types: number[] = [];
  const u = await udpUpstream(t, (msg, _r, send) => {
    types.push(Packet.parse(msg).questions[0].type);
    send(makeAnswer(msg, { addresses: ['192.0.2.1'] }));
  });
  const sc = await startSidecar(t, [`--probe=any,127.0.0.1:${u.port},a.example,1,ANY`, '--prometheus-namespace=', '--prometheus-path=/m', await noStats()]);
  await healthWhen(sc.port, 'any', (h) => h.status === 200, 'passes');
  t.equal(types[0], 255);
  const text = (await get(sc.port, '/m')).body;
  t.match(text, /^probe_any_latency_ms_count \d+$/m, 'no namespace: Go\'s BuildFQName leaves it out');
  t.match(text, /^dnsmasq_hits 0$/m);
  t.notMatch(text, /kubedns_/);
  t.equal((await get(sc.port, '/metrics')).status, 404, 'only the given path');
});

t.test('bad flags: exit 2 naming the problem (every rule: test/unit/sidecar-flags.test.ts)', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--probe=kube-dns,127.0.0.1,a.b'], /invalid value "kube-dns,127\.0\.0\.1,a\.b" for flag --probe: probe "kube-dns,127\.0\.0\.1,a\.b": label "kube-dns" must match \^\[a-zA-Z0-9_\]\+\$/],
    [['--probe=x,127.0.0.1'], /probe "x,127\.0\.0\.1": expected <label>,<server>\[:<port>\],<name>\[,<interval>\]\[,<type>\] \(3 to 5 fields, got 2\)/],
    [['--probe=x,127.0.0.1,a.b,soon'], /interval "soon" is neither whole seconds nor a duration/],
    [['--probe=x,kube-dns.kube-system,a.b'], /server "kube-dns\.kube-system": not an IP address/],
    [['--probe=x,127.0.0.1,a.b', '--probe=x,127.0.0.2,c.d'], /label "x" is already used by another probe/],
    [['--no-such-flag'], /unknown flag: --no-such-flag/],
    [['--dnsmasq-port=0'], /--dnsmasq-port: must be 1-65535/],
    [['--prometheus-namespace=kube-dns'], /--prometheus-namespace: must be empty or a metric name prefix/],
    [['stray'], /unexpected argument "stray"/],
  ];
  const runs = cases.map(([args]) => startProgram(t, 'sidecar', args));
  const codes = await Promise.all(runs.map((p) => p.exited));
  cases.forEach(([args, message], i) => {
    t.equal(codes[i], 2, args.join(' '));
    t.match(runs[i].output(), message, args.join(' '));
    t.match(runs[i].output(), /see sidecar --help/);
  });
});

t.test('--version, --version=raw and --help exit 0', async (t) => {
  const [plain, raw, help] = [['--version'], ['--version=raw'], ['--help']].map((args) => startProgram(t, 'sidecar', args));
  t.same(await Promise.all([plain.exited, raw.exited, help.exited]), [0, 0, 0]);
  t.match(plain.output(), /^Kube-DNS \d+\.\d+\.\d+\n$/);
  t.match(raw.output(), /^"\d+\.\d+\.\d+"\n$/);
  for (const flag of ['dnsmasq-addr', 'dnsmasq-port', 'dnsmasq-poll-interval-ms', 'probe', 'prometheus-addr', 'prometheus-port', 'prometheus-path', 'prometheus-namespace', 'version']) {
    t.match(help.output(), `--${flag}`);
  }
});

t.test('the manifest\'s arguments start it; /healthz as the original; SIGTERM exits 0', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  const sc = await startSidecar(t, ['--v=2', `--probe=kubedns,127.0.0.1:${kd.dnsPort},${NAME},5,SRV`, `--probe=dnsmasq,127.0.0.1:${await freePort()},${NAME},5,SRV`, await noStats()]);
  const healthz = await get(sc.port, '/healthz');
  t.equal(healthz.status, 200);
  t.match(healthz.body, /^ok \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC\)\n$/);
  t.match(sc.program.output(), /I sidecar: probe label=kubedns server=127\.0\.0\.1:\d+ name=kubernetes\.default\.svc\.cluster\.local\. type=SRV intervalMs=5000/);
  t.equal(await sc.program.stop(), 0);
  t.match(sc.program.output(), /shutting down signal=SIGTERM/);
});

t.test('a taken HTTP port: exit 1 saying so', async (t) => {
  const first = await startSidecar(t, [await noStats()]);
  const second = startProgram(t, 'sidecar', ['--prometheus-addr=127.0.0.1', `--prometheus-port=${first.port}`, await noStats()]);
  t.equal(await second.exited, 1);
  t.match(second.output(), /E sidecar: cannot start err=".*EADDRINUSE/);
});
