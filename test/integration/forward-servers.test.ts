// Per-upstream counters (what dnscache's servers.bind shows) and disabling a server, against real
// UDP upstreams on 127.0.0.1.
import t from 'tap';
import type { Test } from 'tap';
import { Forwarder, ForwardError } from '../../pkg/forward/forward.ts';
import type { ServerStats, Upstream } from '../../pkg/forward/forward.ts';
import { makeAnswer, makeQuery, readAnswer } from '../helpers/packets.ts';
import { answering, blackhole, truncatingUpstream } from '../helpers/upstreams.ts';

function forwarder(t: Test): Forwarder {
  const f = new Forwarder({ timeoutMs: 300 });
  t.teardown(() => f.close());
  return f;
}

/** serverStats() as `host#port queries failed unanswered [disabled]` strings, easy to compare whole. */
function table(f: Forwarder): string[] {
  return f.serverStats().map((s: ServerStats) => `${s.server.host}#${s.server.port} ${s.queries} ${s.failed} ${s.unanswered}${s.disabled ? ' disabled' : ''}`);
}

const addr = (u: Upstream): string => `${u.host}#${u.port}`;

t.test('each try is counted on the server it went to: SERVFAIL/REFUSED as failed, silence as unanswered', async (t) => {
  const failing = await answering(t, { rcode: 2 });
  const refusing = await answering(t, { rcode: 5 });
  const silent = await blackhole(t);
  const good = await answering(t, { addresses: ['192.0.2.1'] });
  const f = forwarder(t);
  f.setUpstreams([failing, refusing, silent, good]);
  t.same(table(f), [`${addr(failing)} 0 0 0`, `${addr(refusing)} 0 0 0`, `${addr(silent)} 0 0 0`, `${addr(good)} 0 0 0`]);
  t.same(readAnswer(await f.forward(makeQuery('a.example', 1), 'a.example')).addresses, ['192.0.2.1']);
  t.same(readAnswer(await f.forward(makeQuery('b.example', 2), 'b.example')).addresses, ['192.0.2.1']);
  t.same(table(f), [`${addr(failing)} 2 2 0`, `${addr(refusing)} 2 2 0`, `${addr(silent)} 2 0 2`, `${addr(good)} 2 0 0`]);
  t.equal(f.stats.queries, 2, 'forward calls are counted apart from tries');
});

t.test('an address on several routes is one entry; default route first, then the stubs in the order given', async (t) => {
  const one = await answering(t, { addresses: ['192.0.2.1'] });
  const two = await answering(t, { addresses: ['192.0.2.2'] });
  const three = await answering(t, { addresses: ['192.0.2.3'] });
  const f = forwarder(t);
  f.setStubDomains(new Map([['corp', [three, one]], ['lab', [two]]]));
  f.setUpstreams([one]);
  await f.forward(makeQuery('www.example', 1), 'www.example');
  await f.forward(makeQuery('db.corp', 2), 'db.corp');
  await f.forward(makeQuery('x.lab', 3), 'x.lab');
  t.same(table(f), [`${addr(one)} 1 0 0`, `${addr(three)} 1 0 0`, `${addr(two)} 1 0 0`]);
});

t.test('counts stay with an address that stays configured; a dropped address is gone and starts again at 0', async (t) => {
  const one = await answering(t, { addresses: ['192.0.2.1'] });
  const two = await answering(t, { addresses: ['192.0.2.2'] });
  const f = forwarder(t);
  f.setUpstreams([one]);
  f.setStubDomains(new Map([['corp', [two]]]));
  await f.forward(makeQuery('www.example', 1), 'www.example');
  await f.forward(makeQuery('db.corp', 2), 'db.corp');
  f.setUpstreams([one]);
  f.setStubDomains(new Map());
  t.same(table(f), [`${addr(one)} 1 0 0`], 'reload: one kept its count, two is no longer configured');
  f.setStubDomains(new Map([['corp', [two]]]));
  t.same(table(f), [`${addr(one)} 1 0 0`, `${addr(two)} 0 0 0`]);
  // An address that moves from a stub domain to the default route keeps its counts.
  await f.forward(makeQuery('db.corp', 3), 'db.corp');
  f.setUpstreams([two]);
  t.same(table(f), [`${addr(two)} 1 0 0`], 'one dropped; two, now on the default route too, kept its count');
});

t.test('a TC reply retried over TCP is one try on that server', async (t) => {
  const u = await truncatingUpstream(t, (query) => makeAnswer(query, { addresses: ['192.0.2.9'] }));
  const f = forwarder(t);
  f.setUpstreams([u]);
  t.same(readAnswer(await f.forward(makeQuery('big.example', 1), 'big.example')).addresses, ['192.0.2.9']);
  t.same(table(f), [`${addr(u)} 1 0 0`]);
  t.equal(f.stats.tcpRetries, 1);
});

t.test('disable(): skipped on the default route until the next setUpstreams; stubs naming it still use it', async (t) => {
  const looping = await answering(t, { addresses: ['192.0.2.66'] });
  const good = await answering(t, { addresses: ['192.0.2.1'] });
  const f = forwarder(t);
  f.setUpstreams([looping, good]);
  f.setStubDomains(new Map([['corp', [looping]]]));
  t.equal(f.disable({ host: '127.0.0.1', port: looping.port }), true);
  t.equal(f.disable(looping), false, 'already disabled');
  t.equal(f.disable({ host: '127.0.0.1', port: 1 }), false, 'not configured');
  t.same(f.serversFor('www.example'), [{ host: good.host, port: good.port }], 'not offered for the default route');
  t.same(readAnswer(await f.forward(makeQuery('www.example', 1), 'www.example')).addresses, ['192.0.2.1']);
  t.equal(looping.ids.length, 0, 'never asked on the default route');
  t.same(readAnswer(await f.forward(makeQuery('db.corp', 2), 'db.corp')).addresses, ['192.0.2.66'], 'the stub domain still uses it');
  t.same(table(f), [`${addr(looping)} 1 0 0 disabled`, `${addr(good)} 1 0 0`]);

  f.setUpstreams([looping, good]);
  t.same(table(f), [`${addr(looping)} 1 0 0`, `${addr(good)} 1 0 0`], 'enabled again, counts kept');
  t.same(readAnswer(await f.forward(makeQuery('www.example', 3), 'www.example')).addresses, ['192.0.2.66']);
});

t.test('disable(): a stub-only server cannot be disabled; every default server disabled is FORWARD_NO_SERVERS', async (t) => {
  const only = await answering(t, { addresses: ['192.0.2.1'] });
  const stub = await answering(t, { addresses: ['192.0.2.2'] });
  const f = forwarder(t);
  f.setUpstreams([only]);
  f.setStubDomains(new Map([['corp', [stub]]]));
  t.equal(f.disable(stub), false);
  t.equal(f.disable(only), true);
  const err = await f.forward(makeQuery('www.example', 1), 'www.example').then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof ForwardError);
  t.equal((err as ForwardError).code, 'FORWARD_NO_SERVERS');
  t.equal(only.ids.length, 0);
  t.equal(f.stats.failures, 0, 'not counted as every server failing');
});

t.test('takesAsker: only a name whose every server is on loopback (where dnscache --add-subnet may send an address)', async (t) => {
  const f = forwarder(t);
  const kubedns = { host: '127.0.0.1', port: 10053 };
  f.setUpstreams([{ host: '192.0.2.53', port: 53 }]); // never asked: only the routes are read
  f.setStubDomains(new Map([['cluster.local', [kubedns]], ['mixed.test', [kubedns, { host: '192.0.2.54', port: 53 }]], ['v6.test', [{ host: '::1', port: 10053 }]]]));
  t.ok(f.takesAsker('db.default.svc.cluster.local'));
  t.ok(f.takesAsker('x.v6.test'));
  t.notOk(f.takesAsker('api.example.com'), 'the default route, upstream');
  t.notOk(f.takesAsker('a.mixed.test'), 'a route with one server beyond the pod');
  f.setUpstreams([{ host: '127.0.0.53', port: 53 }]);
  t.ok(f.takesAsker('api.example.com'), 'routes re-read after a reload');
  f.setStubDomains(new Map());
  t.ok(f.takesAsker('db.default.svc.cluster.local'), 'a stub domain gone: the default route decides');
});
