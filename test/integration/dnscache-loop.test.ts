// LoopDetector on its own: the probes real UDP servers on 127.0.0.1 receive (read with dns2), and what
// counts as one of our probes coming back. The whole program catching a real loop is in
// dnscache-upstreams.test.ts.
import t from 'tap';
import type { Test } from 'tap';
import { Packet } from 'dns2';
import { Forwarder } from '../../pkg/forward/forward.ts';
import { LoopDetector } from '../../pkg/dnscache/loop.ts';
import type { Fields, Logger } from '../../pkg/log/log.ts';
import { eventually } from '../helpers/eventually.ts';
import { udpUpstream } from '../helpers/upstreams.ts';
import type { UdpUpstream } from '../helpers/upstreams.ts';

const TXT = 16;
const IN = 1;

interface Probe {
  name: string;
  type: number;
  class: number;
  rd: number;
}

/** A UDP server that records what it is sent and never answers. */
async function recorder(t: Test): Promise<UdpUpstream & { probes: Probe[] }> {
  const probes: Probe[] = [];
  const u = await udpUpstream(t, (msg) => {
    const p = Packet.parse(msg);
    probes.push({ name: p.questions[0].name, type: p.questions[0].type, class: p.questions[0].class, rd: p.header.rd });
  });
  return { ...u, probes };
}

/** The warnings a LoopDetector logs, kept to be read (the rest of the Logger writes nothing). */
function warnings(): Logger & { lines: [string, Fields | undefined][] } {
  const lines: [string, Fields | undefined][] = [];
  const log: Logger & { lines: typeof lines } = {
    lines,
    info: () => {},
    warn: (msg, fields) => lines.push([msg, fields]),
    error: () => {},
    debug: () => {},
    relay: () => {},
    child: () => log,
  };
  return log;
}

t.test('one TXT probe per default server for <8 hex>.test; a probe coming back disables its server once', async (t) => {
  const a = await recorder(t);
  const b = await recorder(t);
  const f = new Forwarder();
  t.teardown(() => f.close());
  f.setUpstreams([a, b]);
  const log = warnings();
  const loop = new LoopDetector(f, log);

  await loop.probe([a, b, a]);
  await eventually(() => a.probes.length === 1 && b.probes.length === 1, 'both servers probed');
  for (const p of [...a.probes, ...b.probes]) {
    t.match(p.name, /^[0-9a-f]{8}\.test$/);
    t.same([p.type, p.class, p.rd], [TXT, IN, 1]);
  }
  const [nameA, nameB] = [a.probes[0].name, b.probes[0].name];
  t.not(nameA, nameB, 'a name per server');
  t.equal(loop.stats.probes, 2, 'a server listed twice is probed once');

  t.equal(loop.caught(nameA, 1, IN), false, 'not TXT');
  t.equal(loop.caught(nameA, TXT, 3), false, 'not class IN');
  t.equal(loop.caught('0123abcd.test', TXT, IN), false, 'a name we did not send');
  t.equal(loop.caught('www.example.com', TXT, IN), false);
  t.same(f.serversFor('www.example.com'), [{ host: a.host, port: a.port }, { host: b.host, port: b.port }]);

  t.equal(loop.caught(nameA, TXT, IN), true);
  t.same(f.serversFor('www.example.com'), [{ host: b.host, port: b.port }], 'off the default route');
  t.same(log.lines, [['NOT using nameserver - query loop detected', { server: `127.0.0.1#${a.port}`, probe: nameA }]]);
  t.equal(loop.caught(nameA, TXT, IN), true, 'still ours, still dropped');
  t.equal(log.lines.length, 1, 'logged once');
  t.equal(loop.stats.loops, 2);

  // A reload: servers enabled again and probed again, under the same names while they stay configured.
  f.setUpstreams([a, b]);
  await loop.probe([a, b]);
  await eventually(() => a.probes.length === 2 && b.probes.length === 2, 'probed again');
  t.same([a.probes[1].name, b.probes[1].name], [nameA, nameB]);
  f.setUpstreams([b]);
  await loop.probe([b]);
  t.equal(loop.caught(nameA, TXT, IN), false, 'a server no longer configured has no probe name');
});
