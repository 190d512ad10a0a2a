// The forwarder against real UDP upstreams on 127.0.0.1.
import t from 'tap';
import type { Test } from 'tap';
import { Forwarder, ForwardError } from '../../pkg/forward/forward.ts';
import type { ForwarderOptions } from '../../pkg/forward/forward.ts';
import { makeAnswer, makeQuery, readAnswer } from '../helpers/packets.ts';
import { freePort } from '../helpers/ports.ts';
import { answering, blackhole, udpUpstream } from '../helpers/upstreams.ts';

function forwarder(t: Test, opts: ForwarderOptions = {}): Forwarder {
  const f = new Forwarder({ timeoutMs: 300, ...opts });
  t.teardown(() => f.close());
  return f;
}

/** `p`, or a rejection naming the wait when it has not settled after `ms`. */
function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function rejection(p: Promise<unknown>): Promise<ForwardError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ForwardError) return err;
    throw err;
  }
  throw new Error('expected a ForwardError');
}

t.test('relays a query: the reply carries the client ID, upstream sees fresh random IDs', async (t) => {
  const up = await answering(t, { addresses: ['192.0.2.10'] });
  const f = forwarder(t);
  f.setUpstreams([up]);
  const query = makeQuery('www.example.com', 0x1234);
  const original = Buffer.from(query);
  for (let i = 0; i < 20; i++) {
    const reply = readAnswer(await f.forward(query, 'www.example.com'));
    t.equal(reply.id, 0x1234);
    t.same(reply.addresses, ['192.0.2.10']);
  }
  t.same(query, original, "the caller's bytes are left alone");
  t.equal(up.ids.length, 20);
  t.ok(new Set(up.ids).size > 1, `IDs sent upstream vary (${new Set(up.ids).size} distinct of 20)`);
  t.equal(f.stats.queries, 20);
  t.equal(f.pending, 0);
});

t.test('a timeout moves on to the next server', async (t) => {
  const silent = await blackhole(t);
  const up = await answering(t, { addresses: ['192.0.2.20'] });
  const f = forwarder(t);
  f.setUpstreams([silent, up]);
  const reply = readAnswer(await f.forward(makeQuery('a.example.com', 7), 'a.example.com'));
  t.equal(reply.id, 7);
  t.same(reply.addresses, ['192.0.2.20']);
  t.equal(silent.ids.length, 1, 'the silent server was asked first');
  t.equal(f.stats.timeouts, 1);
  t.equal(f.stats.failures, 0);
});

t.test('a closed port (ICMP port unreachable) ends the wait at once and moves on', async (t) => {
  // A per-try timeout far beyond the race below: only the kernel's refusal can answer in time.
  const closed = { host: '127.0.0.1', port: await freePort() };
  const up = await answering(t, { addresses: ['192.0.2.21'] });
  const f = forwarder(t, { timeoutMs: 60_000 });
  f.setUpstreams([closed, up]);
  const reply = await within(10_000, f.forward(makeQuery('r.example.com', 8), 'r.example.com'));
  t.same(readAnswer(reply).addresses, ['192.0.2.21'], 'the next server answered');
  t.equal(f.stats.refused, 1, 'counted as refused');
  t.equal(f.stats.timeouts, 0);
  t.match(f.serverStats()[0], { server: closed, queries: 1, unanswered: 1 });
  f.setUpstreams([closed]);
  const err = await rejection(within(10_000, f.forward(makeQuery('r.example.com', 9), 'r.example.com')));
  t.equal(err.code, 'FORWARD_ALL_FAILED', 'only a refusing server: failed at once');
  t.equal(f.stats.refused, 2);
});

t.test('an upstream the kernel cannot send to (connect fails: no route, here a scope-less link-local) moves on at once', async (t) => {
  // In a pod whose resolv.conf names an unreachable network, connect() fails with ENETUNREACH.
  const unroutable = { host: 'fe80::1', port: 53 };
  const up = await answering(t, { addresses: ['192.0.2.22'] });
  const f = forwarder(t, { timeoutMs: 60_000 });
  f.setUpstreams([unroutable, up]);
  const reply = await within(10_000, f.forward(makeQuery('u.example.com', 11), 'u.example.com'));
  t.same(readAnswer(reply).addresses, ['192.0.2.22']);
  t.equal(f.stats.socketErrors, 1);
  t.match(f.serverStats()[0], { server: unroutable, queries: 1, unanswered: 1 });
});

t.test('a budget bounds the whole call: the servers share it, and one spent fails it', async (t) => {
  const first = await blackhole(t);
  const second = await blackhole(t);
  const f = forwarder(t, { timeoutMs: 60_000 });
  f.setUpstreams([first, second]);
  const err = await rejection(within(10_000, f.forward(makeQuery('s.example.com', 10), 's.example.com', 200)));
  t.equal(err.code, 'FORWARD_OUT_OF_TIME');
  t.equal(first.ids.length, 1, 'the first server had the whole budget');
  t.equal(second.ids.length, 0, 'none was left for the second');
  t.equal(f.stats.timeouts, 1);
});

t.test('SERVFAIL and REFUSED move on to the next server', async (t) => {
  const failing = await answering(t, { rcode: 2 });
  const refusing = await answering(t, { rcode: 5 });
  const up = await answering(t, { addresses: ['192.0.2.30'] });
  const f = forwarder(t);
  f.setUpstreams([failing, refusing, up]);
  const reply = readAnswer(await f.forward(makeQuery('b.example.com', 8), 'b.example.com'));
  t.equal(reply.rcode, 0);
  t.same(reply.addresses, ['192.0.2.30']);
  t.equal(failing.ids.length + refusing.ids.length + up.ids.length, 3);
  t.equal(f.stats.serverErrors, 2);
});

t.test('NXDOMAIN is an answer, not a failure', async (t) => {
  const nx = await answering(t, { rcode: 3 });
  const other = await answering(t, { addresses: ['192.0.2.99'] });
  const f = forwarder(t);
  f.setUpstreams([nx, other]);
  t.equal(readAnswer(await f.forward(makeQuery('nope.example.com', 9), 'nope.example.com')).rcode, 3);
  t.equal(other.ids.length, 0);
});

t.test('when every server fails or refuses, the last such reply is returned', async (t) => {
  const failing = await answering(t, { rcode: 2 });
  const silent = await blackhole(t);
  const refusing = await answering(t, { rcode: 5 });
  const f = forwarder(t);
  f.setUpstreams([failing, refusing, silent]);
  const reply = readAnswer(await f.forward(makeQuery('c.example.com', 10), 'c.example.com'));
  t.equal(reply.rcode, 5);
  t.equal(reply.id, 10);
  t.equal(f.stats.failures, 0);
});

t.test('no reply from anyone: FORWARD_ALL_FAILED', async (t) => {
  const a = await blackhole(t);
  const b = await blackhole(t);
  const f = forwarder(t);
  f.setUpstreams([a, b]);
  const err = await rejection(f.forward(makeQuery('d.example.com', 11), 'd.example.com'));
  t.equal(err.code, 'FORWARD_ALL_FAILED');
  t.match(err.message, new RegExp(`127\\.0\\.0\\.1:${a.port}, 127\\.0\\.0\\.1:${b.port}`));
  t.equal(a.ids.length, 1);
  t.equal(b.ids.length, 1);
  t.equal(f.stats.timeouts, 2);
  t.equal(f.stats.failures, 1);
});

t.test('no servers, bad queries, bad upstreams', async (t) => {
  const f = forwarder(t);
  t.equal((await rejection(f.forward(makeQuery('e.example.com', 1), 'e.example.com'))).code, 'FORWARD_NO_SERVERS');
  const up = await answering(t, { addresses: ['192.0.2.1'] });
  f.setUpstreams([up]);
  t.equal((await rejection(f.forward(Buffer.alloc(5), 'x'))).code, 'FORWARD_BAD_QUERY');
  const twoQuestions = makeQuery('e.example.com', 1);
  twoQuestions[5] = 2;
  t.equal((await rejection(f.forward(twoQuestions, 'e.example.com'))).code, 'FORWARD_BAD_QUERY');
  const truncatedName = makeQuery('e.example.com', 1).subarray(0, 20);
  t.equal((await rejection(f.forward(truncatedName, 'e.example.com'))).code, 'FORWARD_BAD_QUERY');
  t.equal(up.ids.length, 0, 'nothing was sent');
  t.throws(() => f.setUpstreams([{ host: 'dns.google', port: 53 }]), { code: 'FORWARD_BAD_UPSTREAM' });
  t.throws(() => f.setUpstreams([{ host: '1.1.1.1', port: 0 }]), { code: 'FORWARD_BAD_UPSTREAM' });
});

t.test('stub domains: the longest matching suffix picks the servers', async (t) => {
  const dflt = await answering(t, { addresses: ['192.0.2.1'] });
  const acme = await answering(t, { addresses: ['192.0.2.2'] });
  const corp = await answering(t, { addresses: ['192.0.2.3'] });
  const f = forwarder(t);
  f.setUpstreams([dflt]);
  f.setStubDomains(
    new Map([
      ['acme.local', [acme]],
      ['corp.acme.local', [corp]],
    ]),
  );
  const ask = async (name: string) => readAnswer(await f.forward(makeQuery(name, 1), name)).addresses[0];
  t.equal(await ask('www.example.com'), '192.0.2.1');
  t.equal(await ask('acme.local'), '192.0.2.2');
  t.equal(await ask('db.acme.local'), '192.0.2.2');
  t.equal(await ask('db.corp.acme.local'), '192.0.2.3');
  t.equal(await ask('db.notacme.local'), '192.0.2.1', 'suffixes match whole labels');
  t.equal(await ask('DB.Corp.ACME.local.'), '192.0.2.3', 'case and trailing dot do not matter');
});

t.test('maxInFlight: over the cap a query is refused at once; close() ends waiting queries', async (t) => {
  const silent = await blackhole(t);
  const f = new Forwarder({ timeoutMs: 30_000, maxInFlight: 1 });
  t.teardown(() => f.close());
  f.setUpstreams([silent]);
  const waiting = rejection(f.forward(makeQuery('f.example.com', 1), 'f.example.com'));
  t.equal((await rejection(f.forward(makeQuery('g.example.com', 2), 'g.example.com'))).code, 'FORWARD_OVERLOADED');
  t.equal(f.stats.overloaded, 1);
  t.equal(f.pending, 1);
  await f.close();
  t.equal((await waiting).code, 'FORWARD_CLOSED');
  t.equal((await rejection(f.forward(makeQuery('h.example.com', 3), 'h.example.com'))).code, 'FORWARD_CLOSED');
});

t.test('sockets are replaced after their quota of queries and replies still match', async (t) => {
  const seenPorts = new Set<number>();
  const up = await udpUpstream(t, (msg, rinfo, send) => {
    seenPorts.add(rinfo.port);
    send(makeAnswer(msg, { addresses: ['192.0.2.50'] }));
  });
  const f = forwarder(t, { udpSockets: 1, udpSocketUses: 3 });
  f.setUpstreams([up]);
  for (let i = 0; i < 9; i++) {
    t.same(readAnswer(await f.forward(makeQuery('p.example.com', i), 'p.example.com')).addresses, ['192.0.2.50']);
  }
  // 3 sockets in turn; the kernel picks each port at random, so two could coincide, but not all three
  t.ok(seenPorts.size > 1, `queries came from ${seenPorts.size} source ports`);
});

t.test('many concurrent queries each get their own answer', async (t) => {
  const up = await udpUpstream(t, (msg, _rinfo, send) => {
    // answer with the query's first label as an address octet, in reverse order of arrival
    const name = msg.toString('latin1', 13, 13 + msg[12]);
    setImmediate(() => send(makeAnswer(msg, { addresses: [`10.0.0.${Number(name.slice(1))}`] })));
  });
  const f = forwarder(t, { timeoutMs: 5000 });
  f.setUpstreams([up]);
  const replies = await Promise.all(
    Array.from({ length: 200 }, (_, i) => f.forward(makeQuery(`q${i % 250}.example.com`, i), `q${i}.example.com`)),
  );
  replies.forEach((r, i) => {
    const a = readAnswer(r);
    if (a.id !== i || a.addresses[0] !== `10.0.0.${i % 250}`) t.fail(`query ${i} got ${JSON.stringify(a)}`);
  });
  t.equal(f.stats.mismatched, 0);
  t.pass('200 concurrent queries answered correctly');
});
