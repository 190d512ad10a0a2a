// dnscache's cache policy (lifetimes, clamps, negative caching) and the TTLs its entries are served
// with, on a stepped clock: each reply goes the way a DnsServer takes it (prepareForCache in the
// handler, templateFromWire, the shared AnswerCache, render).
import t from 'tap';
import { AnswerCache } from '../../pkg/dns/answer-cache.ts';
import { encodeMessage, parseMessage, readQuestion } from '../../pkg/dns/codec.ts';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message, ResourceRecord } from '../../pkg/dns/message.ts';
import { render, templateFromWire } from '../../pkg/dns/template.ts';
import { cacheTtl, clampTtl, prepareForCache, questionKey } from '../../pkg/dnscache/cache.ts';
import type { CachePolicy } from '../../pkg/dnscache/cache.ts';

const policy: CachePolicy = { size: 10, noNegcache: false, negTtl: 0, minCacheTtl: 0, maxCacheTtl: 0 };

const a = (name: string, ttl: number, address = '192.0.2.1'): ResourceRecord => ({ name, type: Type.A, class: Class.IN, ttl, data: { address } });
const soa = (ttl: number, minimum: number): ResourceRecord => ({
  name: 'example.com',
  type: Type.SOA,
  class: Class.IN,
  ttl,
  data: { mname: 'ns.example.com', rname: 'hostmaster.example.com', serial: 1, refresh: 1200, retry: 120, expire: 1209600, minimum },
});

function reply(opts: { answers?: ResourceRecord[]; authorities?: ResourceRecord[]; rcode?: number; tc?: boolean; edns?: boolean; name?: string }): Uint8Array {
  const m = emptyMessage(7);
  m.qr = true;
  m.rcode = opts.rcode ?? Rcode.NOERROR;
  m.tc = opts.tc ?? false;
  m.questions = [{ name: opts.name ?? 'www.example.com', type: Type.A, class: Class.IN }];
  m.answers = opts.answers ?? [];
  m.authorities = opts.authorities ?? [];
  if (opts.edns) m.edns = { udpSize: 1232, version: 0, do: false, extendedRcode: 0, options: [] };
  return encodeMessage(m).bytes;
}

const ttls = (m: Message) => [...m.answers, ...m.authorities, ...m.additionals].map((r) => r.ttl);

/** dnscache in miniature: the handler's part on a miss (store), the DnsServer's on a hit (serve). */
function cacheOn(p: CachePolicy, clock: () => number) {
  const cache = new AnswerCache({ maxEntries: p.size, maxBytes: 1 << 20, clock });
  const req = (() => {
    const m = emptyMessage(0x4242);
    m.questions.push({ name: 'www.example.com', type: Type.A, class: Class.IN });
    return encodeMessage(m).bytes;
  })();
  return {
    cache,
    /** Returns the lifetime given; the entry is stored as the DnsServer stores a cacheable answer. */
    store(key: string, upstream: Uint8Array): number {
      const ttl = prepareForCache(upstream, p, 'www.example.com');
      if (ttl > 0) cache.set(key, templateFromWire(upstream), cache.generation, ttl);
      return ttl;
    },
    serve(key: string): Message | undefined {
      const tpl = cache.get(key);
      return tpl === undefined ? undefined : parseMessage(render(tpl, req, readQuestion(req) - 4, null, 65535, 0, cache.age));
    },
  };
}

t.test("a Corefile cache's ZONES and disable: replies kept only for names they let through", async (t) => {
  const zoned: CachePolicy = { ...policy, zones: ['example.com', 'corp.internal'], disableSuccess: ['private.example.com'], disableDenial: ['corp.internal'] };
  const answer = reply({ answers: [a('www.example.com', 300)] });
  const denial = reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] });
  t.equal(cacheTtl(answer, zoned, 'www.example.com'), 300);
  t.equal(cacheTtl(answer, zoned, 'www.example.org'), 0, 'outside the zones');
  t.equal(cacheTtl(answer, zoned, 'a.private.example.com'), 0, 'success disabled there');
  t.equal(cacheTtl(denial, zoned, 'a.private.example.com'), 30, 'denials still kept there');
  t.equal(cacheTtl(denial, zoned, 'x.corp.internal'), 0, 'denial disabled there');
  t.equal(cacheTtl(answer, zoned, 'x.corp.internal'), 300);
  t.equal(cacheTtl(answer, { ...policy, zones: [''] }, 'anything.test'), 300, "'' holds every name");
});

t.test('positive answers live for their smallest TTL, clamped', async (t) => {
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 300), a('www.example.com', 60, '192.0.2.2')] }), policy, 'www.example.com'), 60);
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 5)] }), { ...policy, minCacheTtl: 30 }, 'www.example.com'), 30);
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 86400)] }), { ...policy, maxCacheTtl: 600 }, 'www.example.com'), 600);
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 0)] }), policy, 'www.example.com'), 0, 'TTL 0 is not kept');
  t.equal(clampTtl(10, { minCacheTtl: 20, maxCacheTtl: 15 }), 15, 'the max wins over the min');
  // The OPT record's TTL field holds flags, never a lifetime.
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 120)], edns: true }), policy, 'www.example.com'), 120);
});

t.test('negative answers: SOA min(TTL, MINIMUM), --neg-ttl, --no-negcache', async (t) => {
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] }), policy, 'www.example.com'), 30);
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(20, 300)] }), policy, 'www.example.com'), 20);
  t.equal(cacheTtl(reply({ authorities: [soa(3600, 45)] }), policy, 'www.example.com'), 45, 'NODATA');
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN }), policy, 'www.example.com'), 0, 'no SOA and no --neg-ttl: not kept');
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN }), { ...policy, negTtl: 15 }, 'www.example.com'), 15);
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] }), { ...policy, noNegcache: true }, 'www.example.com'), 0);
  t.equal(cacheTtl(reply({ authorities: [soa(3600, 30)] }), { ...policy, noNegcache: true }, 'www.example.com'), 0);
});

t.test('TC, SERVFAIL and other errors are never kept', async (t) => {
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 300)], tc: true }), policy, 'www.example.com'), 0);
  t.equal(cacheTtl(reply({ rcode: Rcode.SERVFAIL }), policy, 'www.example.com'), 0);
  t.equal(cacheTtl(reply({ rcode: Rcode.REFUSED }), policy, 'www.example.com'), 0);
  t.equal(cacheTtl(new Uint8Array([1, 2, 3]), policy, 'www.example.com'), 0, 'unreadable');
  const cut = reply({ answers: [a('www.example.com', 300)] });
  t.equal(cacheTtl(cut.subarray(0, cut.length - 3), policy, 'www.example.com'), 0, 'a record running past the end');
});

t.test('prepareForCache: TTLs clamped and capped at the lifetime, in place; untouched when not kept', async (t) => {
  const r = reply({ answers: [a('www.example.com', 100), a('www.example.com', 300, '192.0.2.2')] });
  t.equal(prepareForCache(r, policy, 'www.example.com'), 100);
  t.same(ttls(parseMessage(Buffer.from(r))), [100, 100], 'no record claims more than the entry has');
  const raised = reply({ answers: [a('www.example.com', 5), a('www.example.com', 90, '192.0.2.2')] });
  t.equal(prepareForCache(raised, { ...policy, minCacheTtl: 60 }, 'www.example.com'), 60);
  t.same(ttls(parseMessage(Buffer.from(raised))), [60, 60]);
  const servfail = reply({ rcode: Rcode.SERVFAIL, authorities: [soa(3600, 30)] });
  const before = Buffer.from(servfail);
  t.equal(prepareForCache(servfail, policy, 'www.example.com'), 0);
  t.same(Buffer.from(servfail), before);
  const noCache = reply({ answers: [a('www.example.com', 100)] });
  t.equal(prepareForCache(noCache, { ...policy, size: 0 }, 'www.example.com'), 0, '--cache-size=0 keeps nothing');
  t.same(ttls(parseMessage(Buffer.from(noCache))), [100]);
});

t.test('served TTLs go down by whole seconds of age; the entry ends at its TTL', async (t) => {
  let now = 1000;
  const c = cacheOn(policy, () => now);
  const key = 'www.example.com|1|1|00';
  t.equal(c.store(key, reply({ answers: [a('www.example.com', 100), a('www.example.com', 300, '192.0.2.2')] })), 100);
  t.same(ttls(c.serve(key)!), [100, 100]);
  now += 1;
  t.same(ttls(c.serve(key)!), [99, 99]);
  now += 1;
  t.same(ttls(c.serve(key)!), [98, 98]);
  now = 1099;
  t.same(ttls(c.serve(key)!), [1, 1]);
  now = 1100;
  t.equal(c.serve(key), undefined, 'expired');
  t.same(c.cache.stats, { hits: 4, insertions: 1, evictions: 0, expired: 1, forgotten: 0 });
  t.equal(c.cache.size, 0, 'the expired entry is gone');
});

t.test('a negative entry serves its SOA with the remaining negative TTL', async (t) => {
  let now = 0;
  const c = cacheOn(policy, () => now);
  t.equal(c.store('k', reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] })), 30);
  now = 10;
  const got = c.serve('k')!;
  t.equal(got.rcode, Rcode.NXDOMAIN);
  t.equal(got.authorities[0].ttl, 20);
  now = 30;
  t.equal(c.serve('k'), undefined);
});

t.test('min-cache-ttl raises what is served; max-cache-ttl caps it', async (t) => {
  let now = 0;
  const raised = cacheOn({ ...policy, minCacheTtl: 60 }, () => now);
  raised.store('k', reply({ answers: [a('www.example.com', 5)] }));
  const capped = cacheOn({ ...policy, maxCacheTtl: 600 }, () => now);
  capped.store('k', reply({ answers: [a('www.example.com', 86400)] }));
  now = 30;
  t.same(ttls(raised.serve('k')!), [30]);
  t.same(ttls(capped.serve('k')!), [570]);
});

t.test('what is served does not change with the upstream reply\'s bytes afterwards', async (t) => {
  const c = cacheOn(policy, () => 0);
  const original = reply({ answers: [a('www.example.com', 100)] });
  c.store('k', original);
  original.fill(0, 12);
  t.same(c.serve('k')!.answers[0].data, { address: '192.0.2.1' });
});

t.test('not kept: TC, SERVFAIL, TTL 0; --cache-size=0 keeps nothing', async (t) => {
  const c = cacheOn(policy, () => 0);
  t.equal(c.store('tc', reply({ answers: [a('www.example.com', 300)], tc: true })), 0);
  t.equal(c.store('sf', reply({ rcode: Rcode.SERVFAIL })), 0);
  t.equal(c.store('zero', reply({ answers: [a('www.example.com', 0)] })), 0);
  t.equal(c.cache.size, 0);
  const none = cacheOn({ ...policy, size: 0 }, () => 0);
  t.equal(none.store('k', reply({ answers: [a('www.example.com', 100)] })), 0);
  t.equal(none.serve('k'), undefined);
});

t.test('the question key separates type, class, DO and CD', async (t) => {
  const keys = new Set([
    questionKey('x.example', Type.A, Class.IN, false, false),
    questionKey('x.example', Type.AAAA, Class.IN, false, false),
    questionKey('x.example', Type.A, Class.CH, false, false),
    questionKey('x.example', Type.A, Class.IN, true, false),
    questionKey('x.example', Type.A, Class.IN, false, true),
  ]);
  t.equal(keys.size, 5);
});
