import t from 'tap';
import { encodeMessage, parseMessage } from '../../pkg/dns/codec.ts';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { ResourceRecord } from '../../pkg/dns/message.ts';
import { AnswerCache, cacheKey, cacheTtl, clampTtl } from '../../pkg/dnscache/cache.ts';
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

const ttls = (bytes: Uint8Array) => {
  const m = parseMessage(Buffer.from(bytes));
  return [...m.answers, ...m.authorities, ...m.additionals].map((r) => r.ttl);
};

t.test('positive answers live for their smallest TTL, clamped', async (t) => {
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 300), a('www.example.com', 60, '192.0.2.2')] }), policy), 60);
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 5)] }), { ...policy, minCacheTtl: 30 }), 30);
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 86400)] }), { ...policy, maxCacheTtl: 600 }), 600);
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 0)] }), policy), 0, 'TTL 0 is not kept');
  t.equal(clampTtl(10, { minCacheTtl: 20, maxCacheTtl: 15 }), 15, 'the max wins over the min');
  // The OPT record's TTL field holds flags, never a lifetime.
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 120)], edns: true }), policy), 120);
});

t.test('negative answers: SOA min(TTL, MINIMUM), --neg-ttl, --no-negcache', async (t) => {
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] }), policy), 30);
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(20, 300)] }), policy), 20);
  t.equal(cacheTtl(reply({ authorities: [soa(3600, 45)] }), policy), 45, 'NODATA');
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN }), policy), 0, 'no SOA and no --neg-ttl: not kept');
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN }), { ...policy, negTtl: 15 }), 15);
  t.equal(cacheTtl(reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] }), { ...policy, noNegcache: true }), 0);
  t.equal(cacheTtl(reply({ authorities: [soa(3600, 30)] }), { ...policy, noNegcache: true }), 0);
});

t.test('TC, SERVFAIL and other errors are never kept', async (t) => {
  t.equal(cacheTtl(reply({ answers: [a('www.example.com', 300)], tc: true }), policy), 0);
  t.equal(cacheTtl(reply({ rcode: Rcode.SERVFAIL }), policy), 0);
  t.equal(cacheTtl(reply({ rcode: Rcode.REFUSED }), policy), 0);
  t.equal(cacheTtl(new Uint8Array([1, 2, 3]), policy), 0, 'unreadable');
  const cut = reply({ answers: [a('www.example.com', 300)] });
  t.equal(cacheTtl(cut.subarray(0, cut.length - 3), policy), 0, 'a record running past the end');
});

t.test('served TTLs go down by whole seconds of age; the entry ends at its TTL', async (t) => {
  let now = 1_000_000;
  const cache = new AnswerCache(policy, () => now);
  const key = cacheKey('www.example.com', Type.A, Class.IN, false, false);
  t.equal(cache.set(key, reply({ answers: [a('www.example.com', 100), a('www.example.com', 300, '192.0.2.2')] })), 100);
  t.same(ttls(cache.get(key)!), [100, 100], 'no record claims more than the entry has');
  now += 1999;
  t.same(ttls(cache.get(key)!), [99, 99]);
  now += 1;
  t.same(ttls(cache.get(key)!), [98, 98]);
  now = 1_000_000 + 99_999;
  t.same(ttls(cache.get(key)!), [1, 1]);
  now = 1_000_000 + 100_000;
  t.equal(cache.get(key), undefined, 'expired');
  t.same(cache.stats, { insertions: 1, evictions: 0, hits: 4, misses: 1 });
  t.equal(cache.size, 0, 'the expired entry is gone');
});

t.test('a negative entry serves its SOA with the remaining negative TTL', async (t) => {
  let now = 0;
  const cache = new AnswerCache(policy, () => now);
  cache.set('k', reply({ rcode: Rcode.NXDOMAIN, authorities: [soa(3600, 30)] }));
  now = 10_000;
  const got = parseMessage(Buffer.from(cache.get('k')!));
  t.equal(got.rcode, Rcode.NXDOMAIN);
  t.equal(got.authorities[0].ttl, 20);
});

t.test('min-cache-ttl raises what is served', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ ...policy, minCacheTtl: 60 }, () => now);
  cache.set('k', reply({ answers: [a('www.example.com', 5)] }));
  now = 30_000;
  t.same(ttls(cache.get('k')!), [30]);
});

t.test('the returned copy is the caller\'s own', async (t) => {
  const cache = new AnswerCache(policy);
  const original = reply({ answers: [a('www.example.com', 100)] });
  cache.set('k', original);
  original[original.length - 1] = 99;
  const first = cache.get('k')!;
  first.fill(0);
  t.same(parseMessage(Buffer.from(cache.get('k')!)).answers[0].data, { address: '192.0.2.1' });
});

t.test('evictions count live entries pushed out; size 0 keeps nothing', async (t) => {
  let now = 0;
  const cache = new AnswerCache({ ...policy, size: 2 }, () => now);
  cache.set('a', reply({ answers: [a('www.example.com', 100)] }));
  cache.set('b', reply({ answers: [a('www.example.com', 1)] }));
  now = 5000; // 'b' has expired: pushing it out is not an eviction
  cache.get('a'); // 'a' is now the most recently used
  cache.set('c', reply({ answers: [a('www.example.com', 100)] }));
  t.equal(cache.stats.evictions, 0);
  cache.set('d', reply({ answers: [a('www.example.com', 100)] }));
  t.equal(cache.stats.evictions, 1, 'live entry a pushed out');
  t.equal(cache.get('a'), undefined);
  t.equal(cache.stats.insertions, 4);

  const none = new AnswerCache({ ...policy, size: 0 });
  t.equal(none.set('a', reply({ answers: [a('www.example.com', 100)] })), 0);
  t.equal(none.get('a'), undefined);
  t.equal(none.stats.misses, 1);
});

t.test('the key separates type, class, DO and CD', async (t) => {
  const keys = new Set([
    cacheKey('x.example', Type.A, Class.IN, false, false),
    cacheKey('x.example', Type.AAAA, Class.IN, false, false),
    cacheKey('x.example', Type.A, Class.CH, false, false),
    cacheKey('x.example', Type.A, Class.IN, true, false),
    cacheKey('x.example', Type.A, Class.IN, false, true),
  ]);
  t.equal(keys.size, 5);
});
