// dnscache's fair shares, as the pod runs it (the real program in front of a real dnsmasq): one
// asker (127.0.0.66) floods new names, each a miss forwarded upstream; another (127.0.0.2, real dig)
// asks names the upstream has and names it does not. With --fair-share-busy low enough for this
// machine's flood to reach it, the flooder is named in the log and let go after; the other is
// answered throughout.

import t from 'tap';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { askFrom, floodNames, otherAmidTcpFlood, queuingUpstream } from '../helpers/flood.ts';
import { startProgram } from '../helpers/process.ts';

t.test('a flooding asker named, held to its share and let go; the other answered throughout', async (t) => {
  const up = await startDnsmasq(t, Array.from({ length: 5 }, (_, i) => `192.0.2.${i + 1} host${i}.example.com`));
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', `--server=127.0.0.1#${up.port}`, '--fair-share-busy=5', '--fair-share-floor=50']);
  const port = Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
  const stop = await floodNames(t, port, '127.0.0.66', 10_000, 'flood.example.com');
  const names = [...Array.from({ length: 5 }, (_, i) => `host${i}.example.com`), ...Array.from({ length: 5 }, (_, i) => `none${i}.example.com`)];
  // Asked while the flood runs: two askers, one of them over any fair share.
  const other = await askFrom(port, '127.0.0.2', names);
  await p.waitFor(/asker limited: its cache misses over a fair share are dropped.*asker=127\.0\.0\.66/, 10_000);
  t.ok(other.answered === 10, `the other asker: every question answered (${other.answered} of 10, slowest ${Math.round(other.slowestMs)} ms)`);
  stop();
  await p.waitFor(/asker no longer limited.*asker=127\.0\.0\.66/, 5_000);
  t.pass('the flooder let go a calm second after the flood');
});

t.test("a TCP flood pipelined through an idle cache is not forwarded whole while the upstream's answers queue: another asker's misses wait behind a part of it", async (t) => {
  const up = await queuingUpstream(t);
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', `--server=127.0.0.1#${up.port}`]);
  const port = Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
  const ahead = await otherAmidTcpFlood(t, port, up, 50);
  const last = ahead.slice(-3);
  t.ok(ahead.length >= 3 && Math.max(...last) < 50, `the other asker's last misses waited behind ${last.join(', ')} at the upstream (of ${ahead.join(', ')})`);
});
