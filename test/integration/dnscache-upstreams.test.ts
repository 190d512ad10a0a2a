// dnscache and its upstream servers, as a user sees them: servers.bind beside real dnsmasq's, fail-over
// between servers of a stub domain and of the default route, counts over SIGHUP, and
// --dns-loop-detect catching a real forwarding loop. All through the real program, asked with dig.

import t from 'tap';
import type { Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, dig } from '../helpers/dig.ts';
import type { DigRecord } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { freePort } from '../helpers/ports.ts';
import { startProgram } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';
import { answering, blackhole } from '../helpers/upstreams.ts';

/** dnscache on 127.0.0.1 (`port` 0: a free one), --no-resolv; resolves once it listens. */
async function dnscache(t: Test, args: string[], port = 0): Promise<{ p: Program; port: number }> {
  const p = startProgram(t, 'dnscache', ['-k', `--port=${port}`, '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', ...args]);
  const m = await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/);
  return { p, port: Number(m[1]) };
}

/** servers.bind's one TXT record, as dig prints it, and the reply's flags. */
async function serversBind(port: number): Promise<DigRecord & { flags: string[] }> {
  const r = await dig(port, 'servers.bind', 'TXT', ['-c', 'CH']);
  if (r.status !== 'NOERROR' || r.answer.length !== 1) throw new Error(`servers.bind: ${r.raw}`);
  return { ...r.answer[0], flags: r.flags };
}

/** The quoted strings of a TXT record's data. */
const strings = (rr: DigRecord): string[] => [...rr.data.matchAll(/"([^"]*)"/g)].map((m) => m[1]);

/** A real dnsmasq answering the names every test asks for. */
const goodUpstream = (t: Test) => startDnsmasq(t, ['192.0.2.1 www.example.com', '192.0.2.2 db.corp', '192.0.2.3 x.lab'], ['--local-ttl=300']);

// A silent server costs the forwarder its 2 s timeout before the next one answers.
const slow = ['+time=6'];

t.test("servers.bind: the same record as real dnsmasq's for the same --server list", async (t) => {
  // Four addresses; the first also serves a stub domain, so it is listed once; two domains share one.
  const [a, b, c, d] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const servers = [
    `--server=127.0.0.1#${a}`,
    `--server=/corp/127.0.0.1#${b}`,
    `--server=/corp/127.0.0.1#${a}`,
    `--server=127.0.0.1#${c}`,
    `--server=/lab/x.test/127.0.0.1#${d}`,
  ];
  const real = await startDnsmasq(t, [], servers);
  const ours = await dnscache(t, servers);
  const theirs = await serversBind(real.port);
  const mine = await serversBind(ours.port);
  t.same(mine, theirs);
  t.same(strings(mine), [`127.0.0.1#${a} 0 0`, `127.0.0.1#${b} 0 0`, `127.0.0.1#${c} 0 0`, `127.0.0.1#${d} 0 0`]);
  t.same([mine.class, mine.ttl], ['CH', 0]);
  t.ok(mine.flags.includes('aa'), 'authoritative, as dnsmasq answers it');
});

t.test('servers.bind counts: a try per server, SERVFAIL/REFUSED as failed; kept over SIGHUP while configured', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-dnscache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const failing = await answering(t, { rcode: 2 });
  const good = await goodUpstream(t);
  const file = join(dir, 'servers');
  writeFileSync(file, `server=127.0.0.1#${failing.port}\nserver=127.0.0.1#${good.port}\n`);
  const { p, port } = await dnscache(t, [`--servers-file=${file}`, `--server=/corp/127.0.0.1#${good.port}`]);
  t.same(answers(await dig(port, 'www.example.com')), ['192.0.2.1'], 'after a SERVFAIL from the first server');
  t.same(answers(await dig(port, 'x.lab')), ['192.0.2.3']);
  t.same(answers(await dig(port, 'db.corp')), ['192.0.2.2']);
  // The command line's servers first, then the servers file's: dnsmasq's order.
  t.same(strings(await serversBind(port)), [`127.0.0.1#${good.port} 3 0`, `127.0.0.1#${failing.port} 2 2`]);

  writeFileSync(file, `server=127.0.0.1#${good.port}\n`);
  p.child.kill('SIGHUP');
  await p.waitFor(/reloaded/);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${good.port} 3 0`], 'counts kept; the dropped server is gone');
  writeFileSync(file, `server=127.0.0.1#${failing.port}\nserver=127.0.0.1#${good.port}\n`);
  p.child.kill('SIGHUP');
  await p.waitFor(/reloaded[^]*reloaded/);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${good.port} 3 0`, `127.0.0.1#${failing.port} 0 0`], 'added back: from 0');
});

t.test("ours: a servers-file's no-resolv line leaves the resolv file's servers out, and its absence brings them back, over SIGHUP", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-dnscache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [fromResolv, fromFile] = [await goodUpstream(t), await startDnsmasq(t, ['192.0.2.9 www.example.com'])];
  const [resolv, file] = [join(dir, 'resolv.conf'), join(dir, 'servers')];
  writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  writeFileSync(file, '');
  // A resolv file names addresses only (port 53): it is never asked here, servers.bind lists it.
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--log-facility=-', `--resolv-file=${resolv}`, `--servers-file=${file}`, `--server=127.0.0.1#${fromResolv.port}`]);
  const port = Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${fromResolv.port} 0 0`, '127.0.0.1#53 0 0'], "the command line's server and the resolv file's");
  writeFileSync(file, `no-resolv\nserver=127.0.0.1#${fromFile.port}\n`);
  p.child.kill('SIGHUP');
  await p.waitFor(/reloaded/);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${fromResolv.port} 0 0`, `127.0.0.1#${fromFile.port} 0 0`], 'no-resolv: the resolv file left out');
  writeFileSync(file, `server=127.0.0.1#${fromFile.port}\n`);
  p.child.kill('SIGHUP');
  await p.waitFor(/reloaded[^]*reloaded/);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${fromResolv.port} 0 0`, '127.0.0.1#53 0 0', `127.0.0.1#${fromFile.port} 0 0`], 'without it: back');
});

t.test('fail-over: a stub domain whose first server never answers is answered by its second after the timeout', async (t) => {
  const silent = await blackhole(t);
  const good = await goodUpstream(t);
  const { p, port } = await dnscache(t, [`--server=/corp/127.0.0.1#${silent.port}`, `--server=/corp/127.0.0.1#${good.port}`]);
  const r = await dig(port, 'db.corp', 'A', slow);
  t.equal(r.status, 'NOERROR');
  t.same(answers(r), ['192.0.2.2']);
  t.equal(silent.ids.length, 1, 'the first server was asked first');
  t.same(strings(await serversBind(port)), [`127.0.0.1#${silent.port} 1 0`, `127.0.0.1#${good.port} 1 0`]);
  p.child.kill('SIGUSR1');
  await p.waitFor(new RegExp(`server server=127\\.0\\.0\\.1#${silent.port} queries=1 failed=0 unanswered=1`));
});

t.test('fail-over: a stub domain whose first server SERVFAILs is answered by its second', async (t) => {
  const failing = await answering(t, { rcode: 2 });
  const good = await goodUpstream(t);
  const { port } = await dnscache(t, [`--server=/lab/127.0.0.1#${failing.port}`, `--server=/lab/127.0.0.1#${good.port}`]);
  const r = await dig(port, 'x.lab');
  t.equal(r.status, 'NOERROR');
  t.same(answers(r), ['192.0.2.3']);
  t.equal(failing.ids.length, 1);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${failing.port} 1 1`, `127.0.0.1#${good.port} 1 0`]);
});

t.test('fail-over: the first default server is down, the second answers at once', async (t) => {
  const down = await freePort(); // nothing listens there
  const good = await goodUpstream(t);
  const { port } = await dnscache(t, [`--server=127.0.0.1#${down}`, `--server=127.0.0.1#${good.port}`]);
  // The kernel's port unreachable ends the first try: dig's 1 s is half the forwarder's timeout.
  const r = await dig(port, 'www.example.com', 'A', ['+time=1']);
  t.equal(r.status, 'NOERROR');
  t.same(answers(r), ['192.0.2.1']);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${down} 1 0`, `127.0.0.1#${good.port} 1 0`]);
});

t.test('--dns-loop-detect: a server that hands our queries back is caught at start and on SIGHUP, and never asked', async (t) => {
  const good = await goodUpstream(t);
  // A real loop: dnscache is its own first server, so it needs a fixed port.
  const own = await freePort();
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${own}`, `--server=127.0.0.1#${good.port}`, '--dns-loop-detect', '--log-queries'], own);
  t.equal(port, own);
  const caught = new RegExp(`NOT using nameserver - query loop detected server=127\\.0\\.0\\.1#${own} probe=([0-9a-f]{8}\\.test)`);
  const m = await p.waitFor(caught);
  await p.waitFor(new RegExp(`query name=${m[1].replace('.', '\\.')} type=16 from=loop-probe`));

  const r = await dig(port, 'www.example.com');
  t.same(answers(r), ['192.0.2.1']);
  // The looping server was never asked; the probes are counted nowhere (as dnsmasq's).
  t.same(strings(await serversBind(port)), [`127.0.0.1#${own} 0 0`, `127.0.0.1#${good.port} 1 0`]);
  const misses = await dig(port, 'misses.bind', 'TXT', ['-c', 'CH']);
  t.same(answers(misses), ['"1"'], 'the returning probe is not a cache miss');
  p.child.kill('SIGUSR1');
  await p.waitFor(new RegExp(`server server=127\\.0\\.0\\.1#${own} queries=0 failed=0 unanswered=0 disabled=true`));

  // A reload enables every server again and probes again: caught again, still never asked.
  p.child.kill('SIGHUP');
  await p.waitFor(new RegExp(`reloaded[^]*${caught.source}`));
  t.same(answers(await dig(port, 'db.corp')), ['192.0.2.2']);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${own} 0 0`, `127.0.0.1#${good.port} 2 0`]);
});

t.test('without --dns-loop-detect the same loop is tried first and costs a timeout', async (t) => {
  const good = await goodUpstream(t);
  const own = await freePort();
  const { p, port } = await dnscache(t, [`--server=127.0.0.1#${own}`, `--server=127.0.0.1#${good.port}`], own);
  const r = await dig(port, 'www.example.com', 'A', slow);
  t.same(answers(r), ['192.0.2.1']);
  t.same(strings(await serversBind(port)), [`127.0.0.1#${own} 1 0`, `127.0.0.1#${good.port} 1 0`]);
  t.notMatch(p.output(), /loop detected/);
});
