// One probe against scripted DNS servers on 127.0.0.1: what passes and what fails (rcode checked,
// unlike the original), the /healthcheck body before and after, and the loop's start and stop.

import t from 'tap';
import type { Test } from 'tap';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import { createLogger, setSink } from '../../pkg/log/log.ts';
import { plainLine } from '../helpers/log-lines.ts';
import { judgeReply, Probe, WAITING } from '../../pkg/sidecar/probe.ts';
import type { ProbeResult } from '../../pkg/sidecar/probe.ts';
import { parseProbeSpec } from '../../pkg/sidecar/probe-spec.ts';
import type { ProbeSpec } from '../../pkg/sidecar/probe-spec.ts';
import { eventually } from '../helpers/eventually.ts';
import { makeAnswer } from '../helpers/packets.ts';
import type { AnswerOptions } from '../helpers/packets.ts';
import { answering, blackhole, udpUpstream } from '../helpers/upstreams.ts';

const logLines: string[] = [];
setSink((line) => logLines.push(plainLine(line)));
const log = createLogger('test');

const spec = (text: string): ProbeSpec => parseProbeSpec(text) as ProbeSpec;

async function probeAgainst(t: Test, opts: AnswerOptions, interval = '1') {
  const u = await answering(t, opts);
  const results: ProbeResult[] = [];
  const p = new Probe(spec(`p,127.0.0.1:${u.port},web.default.svc.cluster.local,${interval}`), { log, onResult: (r) => results.push(r) });
  return { p, results, result: await p.probeOnce() };
}

t.test('judgeReply: NOERROR with answers passes; another rcode or no answers fails', async (t) => {
  const m = emptyMessage();
  t.equal(judgeReply(m, 'a.b.'), 'no RRs for domain "a.b."', 'the original\'s message');
  m.answers.push({ name: 'a.b', type: Type.A, class: Class.IN, ttl: 30, data: { address: '192.0.2.1' } });
  t.equal(judgeReply(m, 'a.b.'), null);
  m.rcode = Rcode.SERVFAIL;
  t.equal(judgeReply(m, 'a.b.'), 'SERVFAIL for domain "a.b."', 'answers and an error rcode: still a failure');
});

t.test('before the first probe: waiting', async (t) => {
  const p = new Probe(spec('p,127.0.0.1,a.b'), { log });
  t.same(p.health(), { IsOk: false, LatencySeconds: 0, Err: WAITING });
  t.equal(p.lastResult, null);
});

t.test('an answer: ok, with the latency in seconds', async (t) => {
  const { p, result, results } = await probeAgainst(t, { addresses: ['192.0.2.1'] });
  t.equal(result.ok, true);
  t.equal(result.rcode, 0);
  t.same(results, [result], 'reported to onResult');
  const h = p.health();
  t.equal(h.IsOk, true);
  t.equal(h.Err, '');
  t.ok(h.LatencySeconds > 0 && h.LatencySeconds === Math.round(result.latencyMs * 1e6) / 1e9, 'whole nanoseconds, as Go\'s Duration.Seconds()');
});

t.test('NXDOMAIN, SERVFAIL and an empty NOERROR fail with latency 0', async (t) => {
  const cases: Array<[AnswerOptions, number, string]> = [
    [{ rcode: Rcode.NXDOMAIN }, 3, 'NXDOMAIN for domain "web.default.svc.cluster.local."'],
    [{ rcode: Rcode.SERVFAIL, addresses: ['192.0.2.1'] }, 2, 'SERVFAIL for domain "web.default.svc.cluster.local."'],
    [{ addresses: [] }, 0, 'no RRs for domain "web.default.svc.cluster.local."'],
  ];
  for (const [opts, rcode, err] of cases) {
    const { p, result } = await probeAgainst(t, opts);
    t.same({ ok: result.ok, rcode: result.rcode, err: result.err }, { ok: false, rcode, err });
    t.same(p.health(), { IsOk: false, LatencySeconds: 0, Err: err });
  }
});

t.test('no reply: a timeout of one interval (at most 5 s), rcode -1', async (t) => {
  const u = await blackhole(t);
  const p = new Probe(spec(`p,127.0.0.1:${u.port},a.b,200ms`), { log });
  t.equal(p.timeoutMs, 200);
  t.equal(new Probe(spec('p,127.0.0.1,a.b,60'), { log }).timeoutMs, 5000);
  const r = await p.probeOnce();
  t.same({ ok: r.ok, rcode: r.rcode, err: r.err }, { ok: false, rcode: -1, err: `udp 127.0.0.1:${u.port}: no reply within 200 ms` });
});

t.test('the loop probes on its interval until stopped; state changes are logged once', async (t) => {
  let asked = 0;
  let failing = true;
  const u = await udpUpstream(t, (msg, _r, send) => {
    asked++;
    send(makeAnswer(msg, failing ? { rcode: Rcode.NXDOMAIN } : { addresses: ['192.0.2.1'] }));
  });
  logLines.length = 0;
  const p = new Probe(spec(`loop,127.0.0.1:${u.port},a.b,50ms`), { log, firstDelayMs: 0 });
  p.start();
  await eventually(() => asked >= 3, 'three probes');
  failing = false;
  await eventually(() => p.health().IsOk, 'ok after the server answers');
  await p.stop();
  const after = asked;
  await new Promise((r) => setTimeout(r, 200));
  t.equal(asked, after, 'no probe after stop()');
  t.equal(logLines.filter((l) => l.includes('probe failing')).length, 1, 'one warning for the same failure repeated');
  t.equal(logLines.filter((l) => l.includes('probe ok again')).length, 1);
});
