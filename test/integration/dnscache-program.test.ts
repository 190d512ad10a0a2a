// The real dnscache program in front of real dnsmasq upstreams on 127.0.0.1, asked with dig.

import t from 'tap';
import type { Test } from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { answers, dig, parseDig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import type { Dnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { startProgram } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';
import { askAll, udpClient } from '../helpers/clients.ts';
import { makeAnswer, makeQuery, readAnswer } from '../helpers/packets.ts';
import { blackhole, udpUpstream } from '../helpers/upstreams.ts';

// Authoritative for example.com, so negative answers carry an SOA (MINIMUM = --auth-ttl = 300).
const AUTH = ['--local-ttl=300', '--auth-server=ns.example.com,127.0.0.1', '--auth-zone=example.com', '--auth-ttl=300', '--auth-soa=1,hostmaster.example.com,1200,120,1209600,300'];

async function upstream(t: Test, hosts = ['192.0.2.53 www.example.com']): Promise<Dnsmasq> {
  return startDnsmasq(t, hosts, AUTH);
}

/** Kills an upstream dnsmasq and waits until the process is gone: from then on only the cache answers. */
async function stopUpstream(u: Dnsmasq): Promise<void> {
  process.kill(u.pid, 'SIGKILL');
  await eventually(() => {
    try {
      process.kill(u.pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 'upstream dnsmasq gone');
}

async function dnscache(t: Test, args: string[]): Promise<{ p: Program; port: number }> {
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--log-facility=-', ...args]);
  const m = await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/);
  return { p, port: Number(m[1]) };
}

async function stat(port: number, name: string): Promise<number> {
  const r = await dig(port, name, 'TXT', ['-c', 'CH']);
  if (r.answer.length !== 1) throw new Error(`no answer for ${name}: ${r.raw}`);
  return Number(JSON.parse(r.answer[0].data));
}

// A dead upstream costs the forwarder its 2 s timeout before SERVFAIL.
const slow = ['+time=6'];

t.test('a second identical query is a cache hit: counted, and answered with the upstream gone', async (t) => {
  const u = await upstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--cache-size=500']);
  t.equal(await stat(port, 'cachesize.bind'), 500);
  const first = await dig(port, 'www.example.com');
  t.same(answers(first), ['192.0.2.53']);
  t.equal(await stat(port, 'misses.bind'), 1);
  t.equal(await stat(port, 'insertions.bind'), 1);
  t.equal(await stat(port, 'hits.bind'), 0);
  await stopUpstream(u);
  const second = await dig(port, 'WwW.ExAmPlE.cOm', 'A', slow);
  t.equal(second.status, 'NOERROR');
  t.same(answers(second), ['192.0.2.53'], 'from the cache');
  t.equal(second.question, 'WwW.ExAmPlE.cOm.', 'the asker\'s case');
  t.equal(second.answer[0].name, 'WwW.ExAmPlE.cOm.');
  t.equal(await stat(port, 'hits.bind'), 1);
  t.equal(await stat(port, 'misses.bind'), 1);
  t.equal(await stat(port, 'evictions.bind'), 0);
  // Something never cached needs the (dead) upstream: SERVFAIL, not a hang.
  const other = await dig(port, 'other.example.com', 'A', slow);
  t.equal(other.status, 'SERVFAIL');
});

t.test('--cache-size bounds the entries: past it, the least recently used are pushed out and counted', async (t) => {
  const names = Array.from({ length: 8 }, (_, i) => `n${i}.example.com`);
  const u = await upstream(t, names.map((n, i) => `192.0.2.${i + 1} ${n}`));
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--cache-size=5']);
  for (const n of names) t.equal((await dig(port, n)).status, 'NOERROR', n);
  t.equal(await stat(port, 'insertions.bind'), 8);
  t.equal(await stat(port, 'evictions.bind'), 3, 'three pushed out for room');
  // (Which entries are gone is not asked: with --workers each thread also keeps its own hits.)
  await stopUpstream(u);
  t.same(answers(await dig(port, 'n7.example.com', 'A', slow)), ['192.0.2.8'], 'the newest still kept');
});

t.test('served TTLs go down with the time kept', async (t) => {
  const u = await upstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  const first = await dig(port, 'www.example.com');
  t.equal(first.answer[0].ttl, 300);
  await new Promise((r) => setTimeout(r, 2100));
  const later = await dig(port, 'www.example.com');
  t.ok(later.answer[0].ttl <= 298 && later.answer[0].ttl >= 200, `ttl ${later.answer[0].ttl}`);
  t.equal(await stat(port, 'hits.bind'), 1);
});

t.test('an expired entry is one miss: asked upstream again and stored again', async (t) => {
  const u = await startDnsmasq(t, ['192.0.2.53 www.example.com'], ['--local-ttl=1']);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.53']);
  // Kept for 1 s: gone after 2 whatever the second boundaries.
  await new Promise((r) => setTimeout(r, 2100));
  const again = await dig(port, 'www.example.com');
  t.equal(again.answer[0].ttl, 1, 'a fresh answer');
  t.equal(await stat(port, 'misses.bind'), 2);
  t.equal(await stat(port, 'hits.bind'), 0);
  t.equal(await stat(port, 'insertions.bind'), 2);
  t.equal(await stat(port, 'evictions.bind'), 0, 'an expiry is not an eviction');
  t.match(await dig(port, 'servers.bind', 'TXT', ['-c', 'CH']), { answer: [{ data: `"127.0.0.1#${u.port} 2 0"` }] });
});

t.test('the listen addresses share one cache: asked on one, a hit on the other', async (t) => {
  const u = await upstream(t);
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--listen-address=::1']);
  const v6 = Number((await p.waitFor(/listening address=::1 port=(\d+)/))[1]);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.53']);
  const { stdout } = await promisify(execFile)('dig', ['@::1', '-p', String(v6), 'www.example.com', 'A', '+tries=1', '+time=3']);
  t.same(answers(parseDig(stdout)), ['192.0.2.53']);
  t.equal(await stat(port, 'hits.bind'), 1, 'the hit on ::1 counted with 127.0.0.1\'s');
  t.equal(await stat(port, 'misses.bind'), 1);
  t.equal(await stat(port, 'insertions.bind'), 1);
});

t.test('--max-cache-ttl caps what is served', async (t) => {
  const u = await upstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--max-cache-ttl=60']);
  await dig(port, 'www.example.com');
  const hit = await dig(port, 'www.example.com');
  t.ok(hit.answer[0].ttl <= 60, `ttl ${hit.answer[0].ttl}`);
});

t.test('negative answers (NXDOMAIN and NODATA) are cached from the SOA', async (t) => {
  const u = await upstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  const nx = await dig(port, 'nope.example.com');
  t.equal(nx.status, 'NXDOMAIN');
  t.equal(nx.authority[0]?.type, 'SOA');
  const nodata = await dig(port, 'www.example.com', 'AAAA');
  t.equal(nodata.status, 'NOERROR');
  t.equal(nodata.answer.length, 0);
  t.equal(await stat(port, 'insertions.bind'), 2);
  await stopUpstream(u);
  const nx2 = await dig(port, 'nope.example.com', 'A', slow);
  t.equal(nx2.status, 'NXDOMAIN', 'from the cache');
  t.ok(nx2.authority[0].ttl <= 300);
  t.equal((await dig(port, 'www.example.com', 'AAAA', slow)).status, 'NOERROR');
  t.equal(await stat(port, 'hits.bind'), 2);
});

t.test('--no-negcache keeps negative answers out', async (t) => {
  const u = await upstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--no-negcache']);
  t.equal((await dig(port, 'nope.example.com')).status, 'NXDOMAIN');
  t.equal(await stat(port, 'insertions.bind'), 0);
  await stopUpstream(u);
  t.equal((await dig(port, 'nope.example.com', 'A', slow)).status, 'SERVFAIL', 'asked the upstream again');
});

t.test('stub domains: the longest --server=/domain/ wins, the rest goes to the default', async (t) => {
  // Not authoritative (an auth-mode dnsmasq refuses names outside its zones on that address).
  const general = await startDnsmasq(t, ['192.0.2.53 www.example.com', '192.0.2.1 db.corp.test', '192.0.2.2 web.test'], ['--local-ttl=300']);
  const corp = await startDnsmasq(t, ['192.0.2.99 db.corp.test'], ['--local-ttl=300']);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${general.port}`, `--server=/test/127.0.0.1#${general.port}`, `--server=/corp.test/127.0.0.1#${corp.port}`]);
  t.same(answers(await dig(port, 'db.corp.test')), ['192.0.2.99'], 'corp.test beats test');
  t.same(answers(await dig(port, 'web.test')), ['192.0.2.2']);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.53'], 'default route');
});

t.test('identical queries in flight share one upstream query', async (t) => {
  // A scripted upstream that answers after 300 ms, so all askers arrive while the first waits.
  const slowUpstream = await udpUpstream(t, (msg, _rinfo, send) => {
    setTimeout(() => send(makeAnswer(msg, { addresses: ['192.0.2.7'] })), 300);
  });
  const { port } = await dnscache(t, [`--server=127.0.0.1#${slowUpstream.port}`]);
  const all = await Promise.all([1, 2, 3, 4, 5].map(() => dig(port, 'shared.example')));
  for (const r of all) t.same(answers(r), ['192.0.2.7']);
  t.equal(slowUpstream.ids.length, 1, 'one upstream query for five askers');
  t.equal(await stat(port, 'insertions.bind'), 1, 'stored once');
  t.equal(await stat(port, 'misses.bind'), 5);
});

t.test('unknown options exit 2 naming the option', async (t) => {
  for (const [arg, named] of [['--dnssec', '--dnssec'], ['--server=nonsense', '--server'], ['-y', '-y']]) {
    const p = startProgram(t, 'dnscache', [arg]);
    t.equal(await p.exited, 2, arg);
    t.match(p.output(), named, arg);
  }
});

t.test('--help (-w) lists the options and --version (-v) says what runs, both exit 0, as dnsmasq\'s do', async (t) => {
  for (const arg of ['--help', '-w']) {
    const p = startProgram(t, 'dnscache', [arg]);
    t.equal(await p.exited, 0, arg);
    for (const o of ['-p, --port=<value>', '--cache-bytes=<value>', '--reuse-port', '--no-round-robin']) t.match(p.output(), o, `${arg} lists ${o}`);
  }
  for (const arg of ['--version', '-v']) {
    const p = startProgram(t, 'dnscache', [arg]);
    t.equal(await p.exited, 0, arg);
    t.match(p.output(), /^dnscache version \d+\.\d+\.\d+ /, arg);
  }
});

t.test('--pid-file is written; SIGTERM exits 0 and removes it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-dnscache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = join(dir, 'dnscache.pid');
  const u = await upstream(t);
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, `--pid-file=${pidFile}`]);
  t.equal(readFileSync(pidFile, 'utf8'), `${p.child.pid}\n`);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.53']);
  t.equal(await p.stop('SIGTERM'), 0);
  t.equal(existsSync(pidFile), false);
});

t.test('a reply truncated upstream is fetched over TCP and cached whole', async (t) => {
  const hosts = Array.from({ length: 60 }, (_, i) => `192.0.2.${i + 1} big.example.com`);
  const u = await startDnsmasq(t, hosts, ['--local-ttl=300']);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  // No EDNS: dnsmasq truncates at 512 bytes, the forwarder retries over TCP.
  const first = await dig(port, 'big.example.com', 'A', ['+noedns']);
  t.equal(first.answer.length, 60, 'dig retried over TCP and got all 60');
  await stopUpstream(u);
  const cached = await dig(port, 'big.example.com', 'A', ['+tcp']);
  t.equal(cached.answer.length, 60, 'the whole answer came from the cache');
  // dig's own TCP retry of the first query was the first hit.
  t.equal(await stat(port, 'hits.bind'), 2);
  t.equal(await stat(port, 'misses.bind'), 1);
});

t.test('CHAOS: auth.bind is 0, other names are refused', async (t) => {
  const u = await upstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  t.equal(await stat(port, 'auth.bind'), 0);
  t.equal((await dig(port, 'version.bind', 'TXT', ['-c', 'CH'])).status, 'REFUSED');
  t.equal((await dig(port, 'hits.bind', 'A', ['-c', 'CH'])).status, 'REFUSED');
});

t.test('over --dns-forward-max waiting upstream queries: REFUSED at once; a silent upstream: SERVFAIL', async (t) => {
  const silent = await blackhole(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${silent.port}`, '--dns-forward-max=1']);
  const waiting = dig(port, 'a.example', 'A', slow);
  await eventually(() => silent.ids.length === 1, 'the first query reached the upstream');
  t.equal((await dig(port, 'b.example')).status, 'REFUSED');
  t.equal((await waiting).status, 'SERVFAIL');
});

t.test('a port already taken: exit 1 with the reason', async (t) => {
  const first = await dnscache(t, ['--server=127.0.0.1#53']);
  const second = startProgram(t, 'dnscache', [`--port=${first.port}`, '--listen-address=127.0.0.1', '--no-resolv']);
  t.equal(await second.exited, 1);
  t.match(second.output(), /cannot start.*EADDRINUSE/);
});

t.test('--reuse-port: a second dnscache serves beside the first on its port, and alone once the first stops', async (t) => {
  const u = await upstream(t);
  const first = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--reuse-port']);
  const second = startProgram(t, 'dnscache', ['-k', `--port=${first.port}`, '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', `--server=127.0.0.1#${u.port}`, '--reuse-port']);
  await second.waitFor(/listening address=127\.0\.0\.1/);
  t.equal(await first.p.stop(), 0);
  t.same(answers(await dig(first.port, 'www.example.com')), ['192.0.2.53'], 'UDP, by the second');
  t.same(answers(await dig(first.port, 'www.example.com', 'A', ['+tcp'])), ['192.0.2.53'], 'TCP too');
});

t.test('SIGHUP re-reads --servers-file and clears the cache; SIGUSR1 logs statistics; --log-queries', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-dnscache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const one = await startDnsmasq(t, ['192.0.2.1 www.example.com'], ['--local-ttl=300']);
  const two = await startDnsmasq(t, ['192.0.2.2 www.example.com'], ['--local-ttl=300']);
  const file = join(dir, 'servers');
  writeFileSync(file, `# from the nanny\nserver=127.0.0.1#${one.port}\nnonsense\n`);
  const { p, port } = await dnscache(t, [`--servers-file=${file}`, '--log-queries', '--strict-order']);
  t.match(p.output(), /servers file .*not a server= line/, 'a bad line is logged, the rest used');
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.1']);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.1'], 'cached');
  await p.waitFor(/query name=www\.example\.com type=1 from=cache/);
  writeFileSync(file, `server=/example.com/127.0.0.1#${two.port}\n`);
  p.child.kill('SIGHUP');
  await p.waitFor(/reloaded/);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.2'], 'new route, cache cleared');
  p.child.kill('SIGUSR1');
  const m = await p.waitFor(/statistics .*hits=(\d+) misses=(\d+)/);
  t.same([m[1], m[2]], ['1', '2']);
});

t.test('garbage datagrams and a cut-off query: counted in the SIGUSR1 statistics, and dnscache still answers', async (t) => {
  const u = await upstream(t);
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  const client = await udpClient(t);
  const header = (id: number, flags: number, qd: number): Buffer => {
    const h = Buffer.alloc(12);
    h.writeUInt16BE(id, 0);
    h.writeUInt16BE(flags, 2);
    h.writeUInt16BE(qd, 4);
    return h;
  };
  client.send(Buffer.from([0xde, 0xad, 0xbe]), port); // shorter than a header: malformed, no reply
  client.send(header(0x0101, 0x8000, 1), port); // QR=1, a response: dropped, no reply
  const query = makeQuery('www.example.com', 0x0202);
  client.send(query.subarray(0, 20), port); // the name cut off: malformed, FORMERR
  client.send(Buffer.concat([header(0x0303, 0x0100, 2), query.subarray(12)]), port); // QDCOUNT 2, one question: FORMERR
  const replies = [await client.next(), await client.next()].map((r) => readAnswer(r));
  t.same(
    replies.map((r) => [r.id, r.rcode]).sort(),
    [
      [0x0202, 1],
      [0x0303, 1],
    ],
    'FORMERR for the two that had a header to answer',
  );
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.53'], 'still answering');
  t.same(answers(await dig(port, 'www.example.com', 'A', ['+tcp'])), ['192.0.2.53']);
  t.equal(client.received.length, 0, 'nothing else came back');
  p.child.kill('SIGUSR1');
  const m = await p.waitFor(/dnscache: statistics .*received=(\d+) malformed=(\d+) dropped=(\d+)/);
  t.same([m[2], m[3]], ['3', '1'], 'three malformed (short, cut name, QDCOUNT), one dropped (QR=1)');
  t.equal(m[1], '6', 'received: the four datagrams and both digs');
});

t.test('a miss is relayed as the asker sent it: same question case, same OPT and options, only the ID is the forwarder\'s', async (t) => {
  // OPT: root owner, udp 1232, DO, and an 8-byte COOKIE option (code 10).
  const OPT = Buffer.from([0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 12, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8]);
  const received: Buffer[] = [];
  const u = await udpUpstream(t, (msg, _rinfo, send) => {
    received.push(msg);
    // Answered without the OPT (dns2 does not read it): the relay is what is under test.
    const plain = Buffer.from(msg.subarray(0, msg.length - OPT.length));
    plain.writeUInt16BE(0, 10);
    send(makeAnswer(plain, { addresses: ['192.0.2.9'] }));
  });
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  const client = await udpClient(t);
  const message = Buffer.concat([makeQuery('WwW.ExAmPlE.cOm', 0x4242), OPT]);
  message.writeUInt16BE(1, 10); // ARCOUNT
  client.send(Buffer.concat([message, Buffer.from([0xde, 0xad])]), port); // trailing bytes are not part of it
  const reply = readAnswer(await client.next());
  t.same([reply.id, reply.addresses], [0x4242, ['192.0.2.9']]);
  t.equal(received.length, 1);
  t.same(received[0].subarray(2), message.subarray(2), 'the message bytes after the ID, trailing bytes left off');
});

t.test('--cache-bytes bounds the cache whatever --cache-size allows; SIGUSR1 says what it holds', async (t) => {
  const hosts = Array.from({ length: 40 }, (_, i) => `192.0.2.${i + 1} h${i}.example.com`);
  const u = await upstream(t, hosts);
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`, '--cache-size=1000', '--cache-bytes=4Ki']);
  const replies = await askAll(t, port, hosts.map((_, i) => makeQuery(`h${i}.example.com`, i + 1)));
  t.same(
    replies.map((r) => readAnswer(r)).sort((a, b) => a.id - b.id).map((r) => r.addresses[0]),
    hosts.map((h) => h.split(' ')[0]),
    'every name answered with its address',
  );
  p.child.kill('SIGUSR1');
  const m = await p.waitFor(/statistics cacheSize=1000 entries=(\d+) bytes=(\d+) maxBytes=4096 insertions=(\d+) evictions=(\d+)/);
  const [entries, bytes, insertions, evictions] = m.slice(1).map(Number);
  t.ok(bytes <= 4096, 'within the budget');
  t.ok(entries > 0 && entries < 40, 'fewer entries than names');
  t.equal(insertions, 40);
  t.equal(evictions, 40 - entries, 'the rest pushed out, counted');
});

t.test('a large answer over UDP: as many whole records as fit, with TC (the cache holds it whole)', async (t) => {
  const hosts = Array.from({ length: 60 }, (_, i) => `10.1.0.${i + 1} big.example.com`);
  const u = await upstream(t, hosts);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${u.port}`]);
  for (let round = 0; round < 2; round++) {
    const tc = await dig(port, 'big.example.com', 'A', ['+noedns', '+ignore']);
    t.ok(tc.flags.includes('tc'), `TC set (${round === 0 ? 'relayed' : 'from the cache'})`);
    t.ok(tc.answer.length >= 25, `${tc.answer.length} whole records in 512 bytes, not none`);
    t.equal(new Set(tc.answer.map((a) => a.data)).size, tc.answer.length);
  }
  t.equal((await dig(port, 'big.example.com', 'A', ['+noedns'])).answer.length, 60, 'dig retries over TCP and gets all');
});

t.test('round robin: a cached answer of several A records starts one further on per reply; --no-round-robin keeps the order', async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.1 pool.example.com', '192.0.2.2 pool.example.com', '192.0.2.3 pool.example.com'], ['--local-ttl=60']);
  const orders = async (extra: string[]) => {
    const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', `--server=127.0.0.1#${up.port}`, ...extra]);
    const port = Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push((await dig(port, 'pool.example.com')).answer.map((a) => a.data).join(','));
    return seen;
  };
  const rr = await orders([]);
  t.same(new Set(rr.map((o) => o.split(',').sort().join(','))), new Set(['192.0.2.1,192.0.2.2,192.0.2.3']), 'every reply has every address');
  t.equal(new Set(rr.slice(1).map((o) => o.split(',')[0])).size, 3, `from the cache, each address comes first in turn (${rr.join(' | ')})`);
  t.equal(new Set((await orders(['--no-round-robin'])).slice(1)).size, 1, 'one order with --no-round-robin');
});
