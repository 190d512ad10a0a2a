// dnsmasq-nanny driving the real dnsmasq (/usr/sbin/dnsmasq), with real dnsmasq upstreams: its
// --servers-file is re-read on SIGHUP, and a restart binds the port the old one just left.

import t from 'tap';
import { takeClientSubnet } from '../../pkg/dns/client-subnet.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startNanny } from '../helpers/nanny.ts';
import { nannyScenarios } from '../helpers/nanny-scenarios.ts';
import { makeAnswer } from '../helpers/packets.ts';
import { udpUpstream } from '../helpers/upstreams.ts';

nannyScenarios(t, 'dnsmasq');

t.test("the manifest's --add-subnet=32,128 is not passed to real dnsmasq: no asker's address goes upstream", async (t) => {
  const queries: Buffer[] = [];
  const upstream = await udpUpstream(t, (msg, _r, send) => {
    queries.push(msg);
    send(makeAnswer(msg, { addresses: ['192.0.2.1'] }));
  });
  const n = await startNanny(t, { child: 'dnsmasq', childArgs: ['--add-subnet=32,128'], files: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) } });
  t.match(n.program.output(), /not passed to dnsmasq: it would send each asker's address to every server.* args="?--add-subnet=32,128"?/, 'said why at start');
  t.same(answers(await dig(n.dnsPort, 'www.example.com', 'A', ['+time=2'])), ['192.0.2.1']);
  t.ok(queries.length > 0, 'asked upstream');
  t.same(queries.map((q) => takeClientSubnet(q).scope), queries.map(() => -1), 'no Client Subnet in what reached the upstream');
});
