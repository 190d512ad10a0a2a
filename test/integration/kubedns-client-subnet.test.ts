// The asker's address our caches put in an EDNS Client Subnet stays in the cluster: kube-dns reads it
// (autopath, fair shares) and takes it out of what it forwards upstream; a Client Subnet from any
// other sender is passed on as it came, as CoreDNS's forward does.

import t from 'tap';
import { parseMessage } from '../../pkg/dns/codec.ts';
import { OPTION_ECS } from '../../pkg/dns/question.ts';
import type { Message } from '../../pkg/dns/message.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import { makeAnswer } from '../helpers/packets.ts';
import { udpUpstream } from '../helpers/upstreams.ts';

t.test("a Client Subnet from our cache (loopback) is not passed upstream; the query is", async (t) => {
  const seen: Message[] = [];
  const world = await udpUpstream(t, (msg, _r, send) => {
    seen.push(parseMessage(msg));
    send(makeAnswer(msg, { addresses: ['192.0.2.7'] }));
  });
  const kd = await startKubeDns(t, { clusterYaml: '', args: [`--nameservers=127.0.0.1:${world.port}`] });
  const r = await dig(kd.dnsPort, 'www.example.org', 'A', ['+subnet=10.244.1.7/32']);
  t.same(answers(r), ['192.0.2.7'], 'answered from upstream');
  t.equal(seen.length, 1);
  t.ok(seen[0].edns !== null, 'the OPT goes on (its size, DO)');
  t.same(seen[0].edns!.options.filter((o) => o.code === OPTION_ECS), [], "without the pod's address");
  const ptr = await dig(kd.dnsPort, '7.2.0.192.in-addr.arpa', 'PTR', ['+subnet=10.244.1.7/32']);
  t.equal(ptr.status, 'NOERROR');
  t.same(seen[1].edns!.options.filter((o) => o.code === OPTION_ECS), [], 'nor for a reverse name outside the cluster');
});
