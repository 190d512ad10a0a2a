// The Prometheus text exposition of our own registry: what a scraper parses (HELP and TYPE once a
// family, label values and help escaped, the infinities and NaN spelled as Prometheus spells them), a
// name registered twice refused, counters and gauges by label values, and the process's own metrics
// under the names dashboards read.

import t from 'tap';
import { Registry } from '../../pkg/metrics/registry.ts';
import { Counter, Gauge } from '../../pkg/metrics/metric.ts';
import { FastHistogram } from '../../pkg/metrics/histogram.ts';
import { registerProcessMetrics } from '../../pkg/metrics/process.ts';

t.test('families in the order registered, each with its HELP and TYPE; labels and help escaped', async (t) => {
  const registry = new Registry();
  const c = new Counter({ name: 'a_total', help: 'back\\slash and\nnewline', labelNames: ['path', 'code'], registers: [registry] });
  const g = new Gauge({ name: 'b', help: 'b', registers: [registry] });
  c.inc(2, { code: '200', path: 'say "hi"\\\n' });
  c.inc(1, { path: '/x', code: '500' });
  c.inc(-5, { path: '/x', code: '500' });
  g.set(Number.POSITIVE_INFINITY);
  t.equal(
    await registry.metrics(),
    [
      '# HELP a_total back\\\\slash and\\nnewline',
      '# TYPE a_total counter',
      'a_total{path="say \\"hi\\"\\\\\\n",code="200"} 2',
      'a_total{path="/x",code="500"} 1',
      '# HELP b b',
      '# TYPE b gauge',
      'b +Inf',
      '',
    ].join('\n'),
    'labels in labelNames order; a counter never goes down',
  );
  g.set(Number.NaN);
  t.match(await registry.metrics(), /^b NaN$/m);
  g.set(Number.NEGATIVE_INFINITY);
  t.match(await registry.metrics(), /^b -Inf$/m);
  t.throws(() => new Gauge({ name: 'b', help: 'again', registers: [registry] }), /b is registered already/);
  t.equal(registry.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

t.test('a histogram: cumulative buckets with le last, sum and count; unlabelled, exported before its first observation', async (t) => {
  const registry = new Registry();
  const h = new FastHistogram({ name: 'h_ms', help: 'h', buckets: [0.25, 1], registers: [registry] });
  t.match(await registry.metrics(), /^h_ms_count 0$/m);
  h.observe(0.1);
  h.observe(0.5);
  h.observe(9);
  const lines = (await registry.metrics()).split('\n').filter((l) => l.startsWith('h_ms'));
  t.same(lines, ['h_ms_bucket{le="0.25"} 1', 'h_ms_bucket{le="1"} 2', 'h_ms_bucket{le="+Inf"} 3', 'h_ms_sum 9.6', 'h_ms_count 3']);
});

t.test("the process's metrics: Go's process collector's names and Node's heap, version and event loop lag", async (t) => {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const text = await registry.metrics();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  t.ok(value('process_resident_memory_bytes') > 10 * 2 ** 20, 'resident memory, in bytes');
  t.ok(value('process_virtual_memory_bytes') >= value('process_resident_memory_bytes'));
  t.ok(value('process_cpu_seconds_total') > 0);
  t.ok(Math.abs(value('process_cpu_seconds_total') - value('process_cpu_user_seconds_total') - value('process_cpu_system_seconds_total')) < 0.05, 'user + system');
  t.ok(Math.abs(value('process_start_time_seconds') - (Date.now() / 1000 - process.uptime())) < 2, 'start time, in seconds since the epoch');
  t.ok(value('process_open_fds') > 2 && value('process_open_fds') < value('process_max_fds'));
  t.ok(value('nodejs_heap_size_used_bytes') <= value('nodejs_heap_size_total_bytes'));
  t.ok(value('nodejs_eventloop_lag_seconds') >= 0);
  t.match(text, new RegExp(`^nodejs_version_info\\{version="${process.version}",major="\\d+",minor="\\d+",patch="\\d+"\\} 1$`, 'm'));
  t.match(text, /^# TYPE process_cpu_seconds_total counter$/m);
});
