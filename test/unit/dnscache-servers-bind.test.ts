// servers.bind's strings from the forwarder's per-server counters, and the CHAOS reply carrying them.
import t from 'tap';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import type { ServerStats } from '../../pkg/forward/forward.ts';
import { AnswerCache } from '../../pkg/dnscache/cache.ts';
import { chaosReply, inServerOrder, serversBindTexts } from '../../pkg/dnscache/stats.ts';

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
  const cache = new AnswerCache({ size: 10, noNegcache: false, negTtl: 0, minCacheTtl: 0, maxCacheTtl: 0 });
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
