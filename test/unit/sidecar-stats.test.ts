// dnsmasq statistics → counter increments: the first reading, steady growth, a forwarder restart
// (counts go down: the new values are the increments), cachesize as max_size; and the TXT replies
// accepted or refused as the original's reader does.

import t from 'tap';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message, ResourceRecord } from '../../pkg/dns/message.ts';
import { SidecarError } from '../../pkg/sidecar/errors.ts';
import { StatDeltaTracker, statValue } from '../../pkg/sidecar/stats.ts';
import type { CacheStats } from '../../pkg/sidecar/stats.ts';

const reading = (hits: number, misses: number, evictions: number, insertions: number, cachesize = 150): CacheStats => ({ hits, misses, evictions, insertions, cachesize });

t.test('the first reading is the increment (counted from 0), then differences', async (t) => {
  const d = new StatDeltaTracker();
  t.same(d.update(reading(7, 3, 0, 3)), { add: reading(7, 3, 0, 3), restarted: false });
  t.same(d.update(reading(10, 5, 1, 5)), { add: reading(3, 2, 1, 2, 0), restarted: false });
  t.same(d.update(reading(10, 5, 1, 5)), { add: reading(0, 0, 0, 0, 0), restarted: false }, 'no change: nothing added');
});

t.test('a restart (any running count went down): the new values are the increments', async (t) => {
  const d = new StatDeltaTracker();
  d.update(reading(100, 40, 2, 40));
  t.same(d.update(reading(3, 2, 0, 2)), { add: reading(3, 2, 0, 2, 0), restarted: true });
  t.same(d.update(reading(5, 4, 0, 4)), { add: reading(2, 2, 0, 2, 0), restarted: false }, 'then differences again');
});

t.test('one count lower is enough to see the restart, even when others already passed their old value', async (t) => {
  const d = new StatDeltaTracker();
  d.update(reading(10, 40, 0, 40));
  // The new process has served 25 hits but forwarded only 2 questions since it started.
  t.same(d.update(reading(25, 2, 0, 2)), { add: reading(25, 2, 0, 2, 0), restarted: true });
});

t.test('max_size follows the largest cachesize seen (a setting, not a count)', async (t) => {
  const d = new StatDeltaTracker();
  t.equal(d.update(reading(0, 0, 0, 0, 150)).add.cachesize, 150);
  t.equal(d.update(reading(0, 0, 0, 0, 150)).add.cachesize, 0);
  t.equal(d.update(reading(0, 0, 0, 0, 100)).add.cachesize, 0, 'smaller: nothing');
  t.equal(d.update(reading(0, 0, 0, 0, 1000)).add.cachesize, 850, 'larger: the difference to the largest');
  t.equal(d.update(reading(0, 0, 0, 0, 150)).add.cachesize, 0, 'a restart with a smaller cache adds nothing');
});

t.test('negative values read as 0, as the original', async (t) => {
  const d = new StatDeltaTracker();
  t.same(d.update(reading(-1, 2, 0, 2, -5)).add, reading(0, 2, 0, 2, 0));
});

function reply(answers: ResourceRecord[]): Message {
  const m = emptyMessage(1);
  m.qr = true;
  m.answers = answers;
  return m;
}
const txt = (...texts: string[]): ResourceRecord => ({ name: 'hits.bind', type: Type.TXT, class: Class.CH, ttl: 0, data: { texts } });

t.test('a statistic is one TXT record with one integer string', async (t) => {
  t.equal(statValue('hits.bind.', reply([txt('42')])), 42);
  t.equal(statValue('hits.bind.', reply([txt('+7')])), 7, 'Go\'s ParseInt takes a sign');
  t.equal(statValue('hits.bind.', reply([txt('9007199254740991')])), 9007199254740991);
  const refused: Array<[Message, string]> = [
    [reply([]), 'invalid number of Answer records for hits.bind.: 0'],
    [reply([txt('1'), txt('2')]), 'invalid number of Answer records for hits.bind.: 2'],
    [reply([txt('1', '2')]), 'invalid number of TXT records for hits.bind.: 2'],
    [reply([{ name: 'hits.bind', type: Type.A, class: Class.CH, ttl: 0, data: { address: '192.0.2.1' } }]), 'missing TXT record for hits.bind.'],
    [reply([txt('12abc')]), 'hits.bind.: not an integer: "12abc"'],
    [reply([txt('')]), 'hits.bind.: not an integer: ""'],
    [reply([txt('1.5')]), 'hits.bind.: not an integer: "1.5"'],
  ];
  for (const [m, message] of refused) {
    t.throws(() => statValue('hits.bind.', m), new SidecarError('SIDECAR_BAD_STAT', message), message);
  }
});
