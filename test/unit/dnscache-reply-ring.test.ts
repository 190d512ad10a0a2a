// The ring of replies (pkg/dnscache reply-ring.ts: serve-stale's store, and the per-asker one): what
// is kept is copied out by its key, as kept, its TTLs aged or set, until its time is up; a copy is the
// caller's (later keeps do not change it); a newer reply replaces the older; the
// oldest are given up first when the ring or its table is full; what cannot be kept (a key beyond
// latin1, a reply too big) is not; clear() gives up everything.
import t from 'tap';
import { AGED, ReplyRing } from '../../pkg/dnscache/reply-ring.ts';
import { readTtl, writeTtl } from '../../pkg/dns/walk.ts';

const reply = (n: number, length = 40) => Uint8Array.from({ length }, (_, i) => (n + i) & 0xff);
const wireOf = (r: Uint8Array | null) => (r === null ? null : Array.from(r));

/** A reply of 40 bytes whose TTLs at 12 and 30 are 60 and 300. */
function withTtls(): Uint8Array {
  const r = reply(1);
  writeTtl(r, 12, 60);
  writeTtl(r, 30, 300);
  return r;
}

t.test('a reply is copied by its key as it was kept, its TTLs aged by the whole seconds kept, until its time is up', async (t) => {
  const ring = new ReplyRing(64 * 1024, 100);
  t.equal(ring.copy('a.example.|1|1|00', 0), null, 'nothing kept yet');
  ring.keep('a.example.|1|1|00', withTtls(), [12, 30], 60, 1000, 5000);
  const same = ring.copy('a.example.|1|1|00', 1999)!;
  t.same(wireOf(same), Array.from(withTtls()), 'within its first second: as kept');
  t.equal(ring.leftS, 60);
  const aged = ring.copy('a.example.|1|1|00', 3500)!;
  t.same([readTtl(aged, 12), readTtl(aged, 30)], [58, 298], 'two whole seconds later: each TTL 2 less');
  t.same(Array.from(aged.subarray(0, 12)), Array.from(reply(1).subarray(0, 12)), 'the rest untouched');
  t.equal(ring.leftS, 58, 'the seconds it has left');
  t.equal(ring.copy('a.example.|28|1|00', 2000), null, 'another key: nothing');
  t.equal(ring.copy('a.example.|1|1|00', 5000), null, 'past its time: nothing');
});

t.test('past its TTL a kept reply is copied with TTLs of 0, or every TTL set as asked', async (t) => {
  const ring = new ReplyRing(64 * 1024, 100);
  ring.keep('k', withTtls(), [12, 30], 60, 0, 1_000_000);
  const expired = ring.copy('k', 100_000)!;
  t.same([readTtl(expired, 12), readTtl(expired, 30)], [0, 200], 'aged, never under 0');
  t.equal(ring.leftS, -40, 'expired: 40 s ago');
  const stale = ring.copy('k', 100_000, 30)!;
  t.same([readTtl(stale, 12), readTtl(stale, 30)], [30, 30]);
  const expiredSet = ring.copy('k', 100_000, 5, 30)!;
  t.same([readTtl(expiredSet, 12), readTtl(expiredSet, 30)], [30, 30], 'expired: the TTL for then');
  const goodSet = ring.copy('k', 10_000, AGED, 30)!;
  t.same([readTtl(goodSet, 12), readTtl(goodSet, 30)], [50, 290], 'still good: aged, the TTL for then unused');
  t.equal(ring.leftS, 50);
});

t.test('a copy is the caller\'s: later keeps overwriting the ring do not change it', async (t) => {
  const ring = new ReplyRing(4096, 100);
  ring.keep('k', reply(7), [], 60, 0, 10_000);
  const copy = ring.copy('k', 1)!;
  for (let i = 0; i < 200; i++) ring.keep(`other-${i}`, reply(i), [], 60, 0, 10_000);
  t.equal(ring.copy('k', 1), null, 'overwritten in the ring');
  t.same(wireOf(copy), Array.from(reply(7)), 'the copy as it was');
});

t.test('a newer reply for a key replaces the older', async (t) => {
  const ring = new ReplyRing(64 * 1024, 100);
  ring.keep('k', reply(1), [], 60, 0, 10_000);
  ring.keep('k', reply(2, 20), [], 30, 5, 10_000);
  t.same(wireOf(ring.copy('k', 10)), Array.from(reply(2, 20)));
});

t.test('a full ring gives up its oldest replies first; the newest stay', async (t) => {
  const ring = new ReplyRing(4096, 1000);
  for (let i = 0; i < 200; i++) ring.keep(`name-${i}`, reply(i), [], 60, 0, 10_000);
  t.equal(ring.copy('name-0', 1), null, 'the first kept: overwritten');
  t.same(wireOf(ring.copy('name-199', 1)), Array.from(reply(199)), 'the last kept: found');
  const found = Array.from({ length: 200 }, (_, i) => ring.copy(`name-${i}`, 1) !== null);
  t.ok(found.indexOf(true) > 0 && found.slice(found.indexOf(true)).every(Boolean), `a run of the newest found (${found.filter(Boolean).length} of 200)`);
});

t.test('more keys than the table is sized for: the older half given up, the newest found, every key still found correctly', async (t) => {
  const ring = new ReplyRing(1024 * 1024, 50);
  for (let i = 0; i < 5000; i++) ring.keep(`name-${i}`, reply(i, 16), [], 60, 0, 10_000);
  const found = Array.from({ length: 5000 }, (_, i) => wireOf(ring.copy(`name-${i}`, 1)));
  t.ok(found[4999] !== null && found.filter((f) => f !== null).length <= 64, `the newest found, at most the table's live share (${found.filter((f) => f !== null).length})`);
  t.ok(found.every((f, i) => f === null || f.join() === Array.from(reply(i, 16)).join()), 'what is found is its own key’s reply');
});

t.test('not kept: a key beyond latin1, a reply over a quarter of the ring', async (t) => {
  const ring = new ReplyRing(4096, 10);
  ring.keep('ünïcödé-✓', reply(1), [], 60, 0, 10_000);
  t.equal(ring.copy('ünïcödé-✓', 1), null);
  ring.keep('big', reply(1, 2000), [], 60, 0, 10_000);
  t.equal(ring.copy('big', 1), null);
  ring.keep('small', reply(1, 100), [], 60, 0, 10_000);
  t.not(ring.copy('small', 1), null, 'one that fits is kept');
});

t.test('clear() gives up everything kept; what is kept after it is found', async (t) => {
  const ring = ReplyRing.forReplies(100);
  ring.clear();
  t.equal(ring.copy('a', 0), null, 'clearing an empty ring: nothing');
  ring.keep('a', reply(1), [], 60, 0, 5000);
  ring.keep('b', reply(2), [], 60, 0, 5000);
  ring.clear();
  t.same([ring.copy('a', 1), ring.copy('b', 1)], [null, null], 'cleared');
  ring.keep('a', reply(3), [], 60, 2, 5000);
  t.same(wireOf(ring.copy('a', 3)), Array.from(reply(3)), 'kept again');
  t.equal(ring.copy('b', 3), null);
});
