// pkg/dns's AnswerCache with lifetimes, on a stepped clock: what a reply rendered from an entry
// says (TTLs reduced by whole seconds kept), when an entry is gone, and what the counters count.
import t from 'tap';
import { AnswerCache, entryBytes, timedSlot } from '../../pkg/dns/answer-cache.ts';
import { coarseSeconds } from '../../pkg/dns/clock.ts';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { encodeMessage, parseMessage, readQuestion } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message, ResourceRecord } from '../../pkg/dns/message.ts';
import { recordTtlOffsets, render, renderState, templateFromEncoded, templateFromWire } from '../../pkg/dns/template.ts';
import type { Template } from '../../pkg/dns/template.ts';
import { performance } from 'node:perf_hooks';

const a = (name: string, ttl: number, address: string): ResourceRecord => ({ name, type: Type.A, class: Class.IN, ttl, data: { address } });

function request(name: string, edns: boolean): Buffer {
  const m = emptyMessage(0x1234);
  m.rd = true;
  m.questions.push({ name, type: Type.A, class: Class.IN });
  if (edns) m.edns = { udpSize: 1232, version: 0, do: true, extendedRcode: 0, options: [] };
  return encodeMessage(m).bytes;
}

/** web.example: 2 A answers, 1 NS, 1 glue A, each with its own TTL. */
function answer(): Message {
  const m = emptyMessage();
  m.qr = true;
  m.questions.push({ name: 'web.example', type: Type.A, class: Class.IN });
  m.answers.push(a('web.example', 100, '10.0.0.1'), a('web.example', 40, '10.0.0.2'));
  m.authorities.push({ name: 'example', type: Type.NS, class: Class.IN, ttl: 90, data: { target: 'ns.example' } });
  m.additionals.push(a('ns.example', 70, '10.9.9.9'));
  return m;
}

const stored = (): Template => templateFromEncoded(encodeMessage(answer()), 12 + 13 + 4, Rcode.NOERROR);

/** What a server would send for `req` from the cache: the rendered reply, parsed; null on a miss. */
function serve(cache: AnswerCache, key: string, req: Buffer, limit = 4096): Message | null {
  const tpl = cache.get(key);
  if (tpl === undefined) return null;
  return parseMessage(render(tpl, req, readQuestion(req) - 4, null, limit, 0, cache.age));
}
const ttls = (m: Message | null) => (m === null ? null : [...m.answers, ...m.authorities, ...m.additionals].map((r) => r.ttl));

t.test('every record TTL is served reduced by the whole seconds kept; the entry ends at its lifetime', async (t) => {
  let now = 500;
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => now });
  const req = request('web.example', false);
  cache.set('k', stored(), cache.generation, 40);
  t.same(ttls(serve(cache, 'k', req)), [100, 40, 90, 70], 'at once: as stored');
  now = 501;
  t.same(ttls(serve(cache, 'k', req)), [99, 39, 89, 69]);
  now = 539;
  t.same(ttls(serve(cache, 'k', req)), [61, 1, 51, 31], 'one second left');
  now = 540;
  t.equal(serve(cache, 'k', req), null, 'expired at its lifetime');
  t.equal(cache.size, 0, 'and deleted');
  t.same(cache.stats, { hits: 3, insertions: 1, evictions: 0, expired: 1, forgotten: 0 });
  now = 541;
  t.equal(serve(cache, 'k', req), null, 'an expired entry is counted once');
  t.equal(cache.stats.expired, 1);
});

t.test('a TTL under the age is served as 0, not wrapped', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => now });
  cache.set('k', stored(), 0, 80); // a lifetime past the 40 s record (a handler's choice)
  now = 50;
  t.same(ttls(serve(cache, 'k', request('web.example', false))), [50, 0, 40, 20]);
});

t.test('records cut for size are simply not there; TC keeps none', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => now });
  cache.set('k', stored(), 0, 40);
  now = 10;
  const req = request('web.example', false);
  const full = render(cache.get('k')!, req, readQuestion(req) - 4, null, 4096, 0, cache.age).length;
  const cut = serve(cache, 'k', req, full - 1)!;
  t.same(ttls(cut), [90, 30, 80], 'glue cut, the rest reduced');
  t.equal(renderState.truncated, false);
  const tc = serve(cache, 'k', req, 40)!;
  t.equal(tc.tc, true);
  t.same(ttls(tc), []);
});

t.test('a relayed answer: its OPT is not a record with a TTL (the DO bit stays the asker\'s)', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => now });
  const m = answer();
  m.edns = { udpSize: 1232, version: 0, do: false, extendedRcode: 0, options: [{ code: 3, data: Buffer.from('ns1') }] };
  const tpl = templateFromWire(encodeMessage(m).bytes);
  cache.set('k', tpl, 0, 40);
  t.same(Array.from(tpl.ttlOffsets!).length, 4, 'four records, OPT not among them');
  now = 5;
  const req = request('web.example', true);
  const out = parseMessage(render(cache.get('k')!, req, readQuestion(req) - 4, true, 4096, 0, cache.age));
  t.same(ttls(out), [95, 35, 85, 65]);
  t.match(out.edns, { udpSize: 1232, do: true, extendedRcode: 0, version: 0 });
  t.same(out.edns!.options, [{ code: 3, data: Buffer.from('ns1') }]);
});

t.test('recordTtlOffsets points at every TTL field', async (t) => {
  const tpl = stored();
  const offsets = Array.from(recordTtlOffsets(tpl), (c) => c.charCodeAt(0));
  t.same(offsets.map((o) => Buffer.from(tpl.bytes, 'latin1').readUInt32BE(o)), [100, 40, 90, 70]);
});

t.test('without a lifetime an entry never expires and is served as stored', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => now });
  cache.set('k', stored(), 0);
  now = 1_000_000;
  t.same(ttls(serve(cache, 'k', request('web.example', false))), [100, 40, 90, 70]);
  t.equal(cache.age, 0);
});

t.test('a lifetime under 1 second is not stored; fractions are dropped', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => now });
  cache.set('zero', stored(), 0, 0);
  cache.set('half', stored(), 0, 0.5);
  cache.set('nan', stored(), 0, Number.NaN);
  t.equal(cache.size, 0);
  cache.set('k', stored(), 0, 1.9);
  t.ok(cache.get('k'));
  now = 1;
  t.equal(cache.get('k'), undefined, 'lived 1 s');
  t.equal(cache.stats.insertions, 1);
});

t.test('an answer computed before clear() is not stored', async (t) => {
  const cache = new AnswerCache({ maxEntries: 10, maxBytes: 1 << 20, clock: () => 0 });
  const generation = cache.generation;
  cache.clear();
  cache.set('k', stored(), generation, 40);
  t.equal(cache.get('k'), undefined);
  cache.set('k', stored(), cache.generation, 40);
  t.ok(cache.get('k'));
});

t.test('evictions count live entries pushed out for room, not expired ones; max 0 holds nothing', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ maxEntries: 2, maxBytes: 1 << 20, clock: () => now });
  cache.set('a', stored(), 0, 100);
  cache.set('b', stored(), 0, 1);
  now = 5; // 'b' has expired: pushing it out is not an eviction
  cache.get('a'); // 'a' is now the most recently used
  cache.set('c', stored(), 0, 100);
  t.equal(cache.stats.evictions, 0);
  cache.set('d', stored(), 0, 100);
  t.equal(cache.stats.evictions, 1, 'live entry a pushed out');
  t.equal(cache.get('a'), undefined);
  t.equal(cache.stats.insertions, 4);
  cache.clear();
  t.equal(cache.stats.evictions, 1, 'clear() is not an eviction');

  const none = new AnswerCache({ maxEntries: 0, maxBytes: 1 << 20, clock: () => now });
  none.set('a', stored(), 0, 100);
  t.equal(none.get('a'), undefined);
  t.same(none.stats, { hits: 0, insertions: 0, evictions: 0, expired: 0, forgotten: 0 });
});

t.test('the default clock: whole seconds of the monotonic clock, moving at each boundary', async (t) => {
  // Read well inside a second (the timer moves it ~1 ms after each boundary).
  const midSecond = async () => {
    const ms = performance.now() % 1000;
    await new Promise((r) => setTimeout(r, ms < 500 ? 500 - ms : 1500 - ms));
  };
  coarseSeconds();
  for (let i = 0; i < 3; i++) {
    await midSecond();
    t.equal(coarseSeconds(), Math.floor(performance.now() / 1000));
  }
});

t.test('the cache is bounded by bytes: entryBytes of each entry, at most maxBytes in all', async (t) => {
  const one = entryBytes('k00', stored());
  t.ok(one > stored().bytes.length + 200, 'an entry is counted with its objects, not just its bytes');
  const cache = new AnswerCache({ maxBytes: one * 20, clock: () => 0 });
  for (let i = 0; i < 100; i++) cache.set(`k${String(i).padStart(2, '0')}`, stored(), 0);
  t.equal(cache.size, 20);
  t.ok(cache.bytes <= cache.maxBytes);
  t.equal(cache.stats.evictions, 80, 'the oldest pushed out, counted');
  t.ok(cache.get('k99'), 'the newest kept');
  t.equal(cache.get('k00'), undefined);

  const small = new AnswerCache({ maxBytes: one - 1, clock: () => 0 });
  small.set('k00', stored(), 0);
  t.equal(small.size, 0, 'an entry bigger than the whole budget is not kept');
  t.equal(small.stats.insertions, 0);
});

t.test('a template kept in the cache holds no Buffer: its bytes are one string', async (t) => {
  const tpl = templateFromWire(encodeMessage(answer()).bytes);
  t.type(tpl.bytes, 'string');
  t.equal(tpl.ttlOffsets, null);
  t.equal(tpl.answerEnds, null, 'small enough for any UDP reply: no answer table');
});

t.test('forget(groups) drops the entries stored in those groups, and only those', async (t) => {
  const cache = new AnswerCache({ maxBytes: 1 << 20 });
  const put = (key: string, group?: string) => cache.set(key, stored(), cache.generation, undefined, group);
  put('a1', 'default/a');
  put('a2', 'default/a');
  put('b', 'default/b');
  put('none');
  const generation = cache.generation;
  cache.forget(['default/a', 'default/gone']);
  t.ok(cache.generation > generation, 'an answer computed before forget() is not stored');
  t.equal(cache.get('a1'), undefined);
  t.equal(cache.peek('a2'), undefined, 'peek sees it gone too');
  t.not(cache.get('b'), undefined, 'another group kept');
  t.not(cache.get('none'), undefined, 'an entry without a group kept');
  t.equal(cache.stats.forgotten, 2);
  t.equal(cache.size, 2, 'the forgotten entries were deleted when read');
  put('a1', 'default/a');
  t.not(cache.get('a1'), undefined, 'the group stored again is live');
  cache.forget(['default/a']);
  t.equal(cache.get('a1'), undefined, 'and forgotten again');
});

t.test('entries with a lifetime are counted by tag and type while held, and when pushed out live (CoreDNS cache_entries, evictions)', async (t) => {
  const nxdomain = (): Template => {
    const m = emptyMessage();
    m.qr = true;
    m.rcode = Rcode.NXDOMAIN;
    m.questions.push({ name: 'web.example', type: Type.A, class: Class.IN });
    return templateFromEncoded(encodeMessage(m), 12 + 13 + 4, Rcode.NXDOMAIN);
  };
  const tagged = (tpl: Template, tag: number) => Object.assign(tpl, { tag });
  const clock = { now: 0 };
  const cache = new AnswerCache({ maxBytes: 1 << 20, maxEntries: 3, clock: () => clock.now });
  cache.set('k00', tagged(stored(), 2), 0, 60);
  cache.set('k01', tagged(nxdomain(), 2), 0, 60);
  cache.set('k02', tagged(stored(), 0), 0);
  t.same([cache.timed.entries[timedSlot(2, false)], cache.timed.entries[timedSlot(2, true)], cache.timed.entries[timedSlot(0, false)] ?? 0], [1, 1, 0], 'by tag and type; an entry without a lifetime is not one');
  cache.set('k00', tagged(stored(), 2), 0, 60);
  t.equal(cache.timed.entries[timedSlot(2, false)], 1, 'replaced: still one');
  cache.set('k03', tagged(stored(), 2), 0, 60);
  t.same([cache.timed.entries[timedSlot(2, true)], cache.timed.evictions[timedSlot(2, true)]], [0, 1], 'the oldest (the denial) pushed out live: an eviction');
  clock.now = 61;
  cache.set('k04', tagged(stored(), 2), 0, 60);
  cache.set('k05', tagged(stored(), 2), 0, 60);
  t.equal(cache.timed.evictions[timedSlot(2, false)] ?? 0, 0, 'expired ones pushed out are no evictions');
  t.equal(cache.timed.entries[timedSlot(2, false)], 3, 'held: k03, k04, k05');
  cache.clear();
  t.equal(cache.timed.entries[timedSlot(2, false)], 0, 'cleared: none held');
});
