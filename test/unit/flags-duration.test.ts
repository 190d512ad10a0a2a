import t from 'tap';
import { formatDuration, parseDuration } from '../../pkg/flags/flags.ts';

t.test('Go duration syntax to milliseconds', async (t) => {
  const cases: [string, number][] = [
    ['10s', 10_000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['2h', 7_200_000],
    ['2h45m', 9_900_000],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['1.s', 1000],
    ['100us', 0.1],
    ['100µs', 0.1],
    ['100μs', 0.1],
    ['2000000ns', 2],
    ['-1m', -60_000],
    ['+5s', 5000],
    ['0', 0],
    ['0s', 0],
    ['1h1m1s1ms', 3_661_001],
  ];
  for (const [text, ms] of cases) t.equal(parseDuration(text), ms, text);
});

t.test('not durations', async (t) => {
  for (const text of ['', '10', '1.5', 's', '.s', '10x', '10 s', '1h-1m', '5sec', '-', '1e3s', '0x10s']) {
    t.equal(parseDuration(text), undefined, JSON.stringify(text));
  }
});

t.test('formatted as Go prints them', async (t) => {
  const cases: [number, string][] = [
    [0, '0s'],
    [500, '500ms'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [90_000, '1m30s'],
    [7_200_000, '2h0m0s'],
    [0.25, '250µs'],
    [0.0005, '500ns'],
    [-60_000, '-1m0s'],
  ];
  for (const [ms, text] of cases) t.equal(formatDuration(ms), text, String(ms));
});

t.test('format and parse round-trip', async (t) => {
  for (const ms of [1, 999, 1000, 61_000, 3_600_000, 86_400_000, 5_400_500]) {
    t.equal(parseDuration(formatDuration(ms)), ms, String(ms));
  }
});
