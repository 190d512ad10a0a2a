// DnsServer with answers that carry a lifetime (Answer.ttl), on a cache whose clock the test steps,
// asked with the real dig: TTLs served reduced by the seconds kept, expiry back to the handler, one
// cache shared by two servers, DO and CD keeping separate entries, the onCacheHit hook.
import t from 'tap';
import type { Test } from 'tap';
import { AnswerCache } from '../../pkg/dns/answer-cache.ts';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Answer, DnsServerOptions, Query } from '../../pkg/dns/server.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startServer } from '../helpers/dns-server.ts';

/** Answers `<n>.many.test` with n A records, TTL 300 (lifetime 300), and counts the questions it saw. */
function ttlZone() {
  const asked: Query[] = [];
  const handler = (q: Query): Answer => {
    asked.push(q);
    const m = emptyMessage();
    m.aa = true;
    const n = Number(q.qname.split('.')[0]) || 1;
    for (let i = 0; i < n; i++) m.answers.push({ name: q.qname, type: Type.A, class: Class.IN, ttl: 300, data: { address: `10.7.${i >> 8}.${i & 255}` } });
    return { message: m, cacheable: true, ttl: 300 };
  };
  return { handler, asked };
}

function stepped() {
  const clock = { now: 100 };
  return { clock, cache: new AnswerCache({ maxBytes: 1 << 20, clock: () => clock.now }) };
}

async function server(t: Test, opts: Omit<DnsServerOptions, 'address' | 'port'>) {
  return startServer(t, opts);
}

t.test('TTLs go down by the seconds kept; at its lifetime the entry is gone and the handler asked again', async (t) => {
  const z = ttlZone();
  const { clock, cache } = stepped();
  const { server: s, port } = await server(t, { handler: z.handler, answerCache: cache });
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [300]);
  clock.now += 7;
  const later = await dig(port, 'OnE.TeSt');
  t.same(later.answer.map((r) => [r.name, r.ttl]), [['OnE.TeSt.', 293]], 'from the cache, asker\'s case');
  clock.now += 292;
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [1]);
  t.equal(z.asked.length, 1);
  clock.now += 1;
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [300], 'expired: a fresh answer');
  t.equal(z.asked.length, 2, 'the handler was asked again');
  t.same([s.stats.cacheHits, s.stats.cacheMisses], [2, 2]);
  t.same(cache.stats, { hits: 2, insertions: 2, evictions: 0, expired: 1, forgotten: 0 });
});

t.test('a reply cut to TC over UDP; dig\'s TCP retry gets every record, reduced', async (t) => {
  const z = ttlZone();
  const { clock, cache } = stepped();
  const { port } = await server(t, { handler: z.handler, answerCache: cache });
  await dig(port, '60.many.test');
  clock.now += 20;
  const r = await dig(port, '60.many.test', 'A', ['+noedns']);
  t.match(r.raw, /Truncated, retrying in TCP mode/);
  t.equal(r.answer.length, 60);
  t.same(new Set(r.answer.map((x) => x.ttl)), new Set([280]));
  t.equal(z.asked.length, 1);
});

t.test('one cache shared by two servers: asked on one, a hit on the other; invalidate() clears both', async (t) => {
  const z = ttlZone();
  const { cache } = stepped();
  const one = await server(t, { handler: z.handler, answerCache: cache });
  const two = await server(t, { handler: z.handler, answerCache: cache });
  t.same(answers(await dig(one.port, 'shared.test')), ['10.7.0.0']);
  t.same(answers(await dig(two.port, 'shared.test')), ['10.7.0.0']);
  t.equal(z.asked.length, 1);
  t.same([one.server.stats.cacheMisses, two.server.stats.cacheHits], [1, 1]);
  two.server.invalidate();
  await dig(one.port, 'shared.test');
  t.equal(z.asked.length, 2, 'cleared for the other server too');
});

t.test('DO and CD each get their own entry', async (t) => {
  const z = ttlZone();
  const { cache } = stepped();
  const { port } = await server(t, { handler: z.handler, answerCache: cache });
  const variants = [[], ['+dnssec'], ['+cdflag'], ['+dnssec', '+cdflag']];
  for (const extra of variants) await dig(port, 'flags.test', 'A', extra);
  t.equal(z.asked.length, 4, 'four questions for the handler');
  t.same(
    z.asked.map((q) => [q.message.edns?.do === true, q.message.cd]),
    [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ],
  );
  for (const extra of variants) {
    const r = await dig(port, 'flags.test', 'A', extra);
    t.equal(r.edns?.flags.includes('do'), extra.includes('+dnssec'), `DO as asked: ${extra.join(' ')}`);
    t.equal(r.flags.includes('cd'), extra.includes('+cdflag'), `CD as asked: ${extra.join(' ')}`);
  }
  t.equal(z.asked.length, 4, 'each a hit the second time');
  t.equal(cache.size, 4);
  // Without EDNS, DO is off: the same entry as an EDNS asker without DO.
  await dig(port, 'flags.test', 'A', ['+noedns']);
  t.equal(z.asked.length, 4);
});

t.test('onCacheHit sees every query answered from the cache (the handler sees none of them)', async (t) => {
  const z = ttlZone();
  const { cache } = stepped();
  const seen: string[] = [];
  const { port } = await server(t, {
    handler: z.handler,
    answerCache: cache,
    onCacheHit: (req, nameEnd, address) => seen.push(`${Buffer.from(req).toString('latin1', 13, nameEnd - 1)} ${Buffer.from(req).readUInt16BE(nameEnd)} ${address}`),
  });
  await dig(port, 'hook.test');
  t.same(seen, [], 'not for a miss');
  await dig(port, 'HoOk.test', 'A');
  t.same(seen, ['HoOk\u0004test 1 127.0.0.1']);

  // A hook that throws costs nobody an answer.
  const errors: unknown[] = [];
  const other = await server(t, {
    handler: z.handler,
    answerCache: cache,
    observer: { handlerError: (err) => errors.push(err) },
    onCacheHit: () => {
      throw new Error('logging bug');
    },
  });
  t.same(answers(await dig(other.port, 'hook.test')), ['10.7.0.0']);
  t.equal(errors.length, 1);
});

t.test('prefetch: an answer asked AMOUNT times without a gap of DURATION is asked again once PERCENTAGE of its TTL is left, and served on past its first lifetime', async (t) => {
  const z = ttlZone();
  const rule = { amount: 3, windowS: 60, percent: 10 };
  const handler = (q: Query): Answer => ({ ...z.handler(q), prefetch: rule });
  const { clock, cache } = stepped();
  const { server: s, port } = await server(t, { handler, answerCache: cache });
  const ask = async () => (await dig(port, 'one.test')).answer.map((r) => r.ttl);
  t.same(await ask(), [300], 'a miss');
  clock.now += 200;
  t.same([await ask(), await ask(), await ask()], [[100], [100], [100]], 'popular but 100 s left of 300 (more than 10%): no prefetch');
  t.equal(z.asked.length, 1);
  clock.now += 70;
  t.same(await ask(), [30], 'a hit 70 s after the last: the count starts again');
  t.same(await ask(), [30]);
  t.equal(z.asked.length, 1, 'two asks since the gap: not popular yet');
  t.same(await ask(), [30], 'the third ask without a gap, 30 s (10%) left: answered from the cache...');
  t.equal(z.asked.length, 2, '...and the handler asked again behind it');
  t.ok(z.asked[1].prefetch, 'told it is a prefetch');
  t.notOk(z.asked[0].prefetch);
  t.same(await ask(), [300], 'the prefetched answer in its place');
  clock.now += 31;
  t.same(await ask(), [269], 'past the first lifetime: still a hit');
  t.equal(z.asked.length, 2, 'no miss');
  t.equal(s.stats.prefetches, 1);
  const lefts: number[][] = [];
  for (let i = 0; i < 4; i++) {
    clock.now += 60;
    lefts.push(await ask());
  }
  t.same(lefts, [[209], [149], [89], [29]], 'asked every minute (no gap of more than DURATION)');
  t.equal(z.asked.length, 3, 'still popular: prefetched again at 10% left');
});

t.test('prefetch: a failed or uncacheable refresh leaves the entry to expire, and a later ask may try again', async (t) => {
  const z = ttlZone();
  const rule = { amount: 1, windowS: 60, percent: 50 };
  let failing = true;
  const handler = (q: Query): Answer | Promise<Answer> => {
    if (q.prefetch && failing) {
      z.asked.push(q);
      return Promise.reject(new Error('upstream down'));
    }
    return { ...z.handler(q), prefetch: rule };
  };
  const errors: unknown[] = [];
  const { clock, cache } = stepped();
  const { port } = await server(t, { handler, answerCache: cache, observer: { handlerError: (e) => errors.push(e) } });
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [300]);
  clock.now += 160;
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [140], 'answered from the cache');
  await new Promise((r) => setImmediate(r));
  t.equal(z.asked.length, 2, 'a prefetch tried');
  t.equal(errors.length, 1, 'its failure reported as a handler error');
  failing = false;
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [140], 'the old entry still answers');
  await new Promise((r) => setImmediate(r));
  t.equal(z.asked.length, 3, 'the next ask tried again, and got it');
  t.same((await dig(port, 'one.test')).answer.map((r) => r.ttl), [300]);
});
