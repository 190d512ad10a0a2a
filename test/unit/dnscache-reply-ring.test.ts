// The ring of replies (pkg/dnscache reply-ring.ts: serve-stale's store, and the per-asker one): what
// is kept is found by its key, as kept, until its time is up; a newer reply replaces the older; the
// oldest are given up first when the ring or its table is full; what cannot be kept (a key beyond
// latin1, a reply too big) is not; clear() gives up everything.
import t from 'tap';
import { ReplyRing } from '../../pkg/dnscache/reply-ring.ts';
import type { KeptReply } from '../../pkg/dnscache/reply-ring.ts';

const reply = (n: number, length = 40) => Uint8Array.from({ length }, (_, i) => (n + i) & 0xff);
const wireOf = (r: KeptReply | null) => (r === null ? null : Array.from(r.wire));

t.test('a reply is found by its key as it was kept, with its offsets, TTL and time, until its time is up', async (t) => {
  const ring = new ReplyRing(64 * 1024, 100);
  t.equal(ring.find('a.example.|1|1|00', 0), null, 'nothing kept yet');
  ring.keep('a.example.|1|1|00', reply(1), [12, 30], 60, 1000, 5000);
  const r = ring.find('a.example.|1|1|00', 2000)!;
  t.same(wireOf(r), Array.from(reply(1)));
  t.same(r.ttlOffsets, [12, 30]);
  t.same([r.ttl, r.storedAt], [60, 1000]);
  t.equal(ring.find('a.example.|28|1|00', 2000), null, 'another key: nothing');
  t.equal(ring.find('a.example.|1|1|00', 5000), null, 'past its time: nothing');
});

t.test('a newer reply for a key replaces the older', async (t) => {
  const ring = new ReplyRing(64 * 1024, 100);
  ring.keep('k', reply(1), [], 60, 0, 10_000);
  ring.keep('k', reply(2, 20), [], 30, 5, 10_000);
  t.same(wireOf(ring.find('k', 10)), Array.from(reply(2, 20)));
});

t.test('a full ring gives up its oldest replies first; the newest stay', async (t) => {
  const ring = new ReplyRing(4096, 1000);
  for (let i = 0; i < 200; i++) ring.keep(`name-${i}`, reply(i), [], 60, 0, 10_000);
  t.equal(ring.find('name-0', 1), null, 'the first kept: overwritten');
  t.same(wireOf(ring.find('name-199', 1)), Array.from(reply(199)), 'the last kept: found');
  const found = Array.from({ length: 200 }, (_, i) => ring.find(`name-${i}`, 1) !== null);
  t.ok(found.indexOf(true) > 0 && found.slice(found.indexOf(true)).every(Boolean), `a run of the newest found (${found.filter(Boolean).length} of 200)`);
});

t.test('more keys than the table is sized for: the older half given up, the newest found, every key still found correctly', async (t) => {
  const ring = new ReplyRing(1024 * 1024, 50);
  for (let i = 0; i < 5000; i++) ring.keep(`name-${i}`, reply(i, 16), [], 60, 0, 10_000);
  const found = Array.from({ length: 5000 }, (_, i) => wireOf(ring.find(`name-${i}`, 1)));
  t.ok(found[4999] !== null && found.filter((f) => f !== null).length <= 64, `the newest found, at most the table's live share (${found.filter((f) => f !== null).length})`);
  t.ok(found.every((f, i) => f === null || f.join() === Array.from(reply(i, 16)).join()), 'what is found is its own key’s reply');
});

t.test('not kept: a key beyond latin1, a reply over a quarter of the ring', async (t) => {
  const ring = new ReplyRing(4096, 10);
  ring.keep('ünïcödé-✓', reply(1), [], 60, 0, 10_000);
  t.equal(ring.find('ünïcödé-✓', 1), null);
  ring.keep('big', reply(1, 2000), [], 60, 0, 10_000);
  t.equal(ring.find('big', 1), null);
  ring.keep('small', reply(1, 100), [], 60, 0, 10_000);
  t.not(ring.find('small', 1), null, 'one that fits is kept');
});

t.test('clear() gives up everything kept; what is kept after it is found', async (t) => {
  const ring = ReplyRing.forReplies(100);
  ring.clear();
  t.equal(ring.find('a', 0), null, 'clearing an empty ring: nothing');
  ring.keep('a', reply(1), [], 60, 0, 5000);
  ring.keep('b', reply(2), [], 60, 0, 5000);
  ring.clear();
  t.same([ring.find('a', 1), ring.find('b', 1)], [null, null], 'cleared');
  ring.keep('a', reply(3), [], 60, 2, 5000);
  t.same(wireOf(ring.find('a', 3)), Array.from(reply(3)), 'kept again');
  t.equal(ring.find('b', 3), null);
});
