// mirroredCounter: a Prometheus counter following running totals kept elsewhere, read at scrape time.
import t from 'tap';
import { Registry } from '../../pkg/metrics/registry.ts';
import { mirroredCounter, mirroredGauge } from '../../pkg/metrics/mirror.ts';

async function scrape(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

t.test('each scrape adds what each total grew; series appear when first yielded; it never goes down', async (t) => {
  const registry = new Registry();
  const totals: Record<string, number> = { a: 3 };
  mirroredCounter(registry, { name: 'x_total', help: 'x', labelNames: ['kind', 'reason'] }, () => Object.entries(totals).map(([k, n]) => [{ reason: 'r', kind: k }, n] as const));
  t.same(await scrape(registry), ['x_total{kind="a",reason="r"} 3']);
  totals.a = 5;
  totals.b = 0;
  t.same(await scrape(registry), ['x_total{kind="a",reason="r"} 5', 'x_total{kind="b",reason="r"} 0'], 'a new series, exported at 0');
  totals.a = 2;
  t.same(await scrape(registry), ['x_total{kind="a",reason="r"} 5', 'x_total{kind="b",reason="r"} 0'], 'a total that went down adds nothing');
  totals.a = 7;
  t.same(await scrape(registry), ['x_total{kind="a",reason="r"} 7', 'x_total{kind="b",reason="r"} 0'], 'until it passes what was reported');
});

t.test('without labels: one series', async (t) => {
  const registry = new Registry();
  let n = 0;
  mirroredCounter(registry, { name: 'y_total', help: 'y' }, () => [[{}, n]]);
  t.same(await scrape(registry), ['y_total 0']);
  n = 4;
  t.same(await scrape(registry), ['y_total 4']);
});

t.test('mirroredGauge: each scrape sets every series to what values() yields now, down as well as up', async (t) => {
  const registry = new Registry();
  let n = 5;
  mirroredGauge(registry, { name: 'z', help: 'z', labelNames: ['kind'] }, () => [[{ kind: 'a' }, n]]);
  t.same(await scrape(registry), ['z{kind="a"} 5']);
  n = 2;
  t.same(await scrape(registry), ['z{kind="a"} 2']);
});
