// servers.bind's strings from the forwarder's per-server counters, and the CHAOS reply carrying them.
import t from 'tap';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import type { ServerStats } from '../../pkg/forward/forward.ts';
import { chaosReply, inServerOrder, serversBindTexts } from '../../pkg/dnscache/stats.ts';
import type { CacheCounters } from '../../pkg/dnscache/stats.ts';

const stat = (host: string, port: number, queries: number, failed: number): ServerStats => ({ server: { host, port }, queries, failed, unanswered: 7, disabled: false });

t.test('one "ip#port queries failed" per address, in the configured order; unlisted addresses last', async (t) => {
  // As the forwarder reports them: default route first, then stubs.
  const stats = [stat('10.0.0.1', 53, 5, 1), stat('::1', 5353, 2, 0), stat('10.0.0.2', 53, 3, 3)];
  const order = [
    { host: '10.0.0.2', port: 53 },
    { host: '0:0:0:0:0:0:0:1', port: 5353 }, // as written on the command line; the forwarder compresses it
    { host: '10.0.0.2', port: 53 },
    { host: '10.0.0.9', port: 53 }, // no longer configured: skipped
  ];
  t.same(serversBindTexts(stats, order), ['10.0.0.2#53 3 3', '::1#5353 2 0', '10.0.0.1#53 5 1']);
  t.same(
    inServerOrder(stats, []).map((s) => s.server.host),
    ['10.0.0.1', '::1', '10.0.0.2'],
  );
});

t.test('the CHAOS reply: one TXT record with a string per server; none configured: no record', async (t) => {
  const cache: CacheCounters = { cachesize: 10, insertions: 0, evictions: 0, hits: 0, misses: 0 };
  const m = chaosReply('servers.bind', Type.TXT, cache, () => ['10.0.0.1#53 1 0', '10.0.0.2#53 0 0']);
  t.equal(m.rcode, Rcode.NOERROR);
  t.ok(m.aa && m.ra);
  t.same(m.answers, [{ name: 'servers.bind', type: Type.TXT, class: Class.CH, ttl: 0, data: { texts: ['10.0.0.1#53 1 0', '10.0.0.2#53 0 0'] } }]);
  const none = chaosReply('servers.bind', Type.TXT, cache, () => []);
  t.equal(none.rcode, Rcode.NOERROR);
  t.same(none.answers, []);
  t.equal(chaosReply('servers.bind', Type.A, cache, () => ['x']).rcode, Rcode.REFUSED, 'TXT (or ANY) only');
  t.equal(chaosReply('servers.bind', Type.TXT, cache).rcode, Rcode.REFUSED, 'without a source of server counts');
});

t.test('the cache statistics: each dnsmasq name carries its counter', async (t) => {
  const counters: CacheCounters = { cachesize: 150, insertions: 4, evictions: 1, hits: 9, misses: 5 };
  const value = (name: string) => chaosReply(name, Type.TXT, counters).answers[0]?.data;
  t.same(value('cachesize.bind'), { texts: ['150'] });
  t.same(value('insertions.bind'), { texts: ['4'] });
  t.same(value('evictions.bind'), { texts: ['1'] });
  t.same(value('hits.bind'), { texts: ['9'] });
  t.same(value('misses.bind'), { texts: ['5'] });
  t.same(value('auth.bind'), { texts: ['0'] });
  t.equal(chaosReply('version.bind', Type.TXT, counters).rcode, Rcode.REFUSED);
});
