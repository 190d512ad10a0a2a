// The forwarder against a real dnsmasq (/usr/sbin/dnsmasq) on 127.0.0.1: plain answers, a REFUSED
// failover, and an answer too big for 512-byte UDP fetched over TCP.
import { existsSync } from 'node:fs';
import t from 'tap';
import { Forwarder } from '../../pkg/forward/forward.ts';
import { DNSMASQ, startDnsmasq } from '../helpers/dnsmasq.ts';
import { makeQuery, readAnswer } from '../helpers/packets.ts';
import { answering } from '../helpers/upstreams.ts';

const big = Array.from({ length: 60 }, (_, i) => `10.1.0.${i + 1}`);

t.test('against dnsmasq', { skip: existsSync(DNSMASQ) ? false : `${DNSMASQ} is not installed` }, async (t) => {
  const { port } = await startDnsmasq(t, big.map((ip) => `${ip} big.hosts.test`), ['--address=/example.test/192.0.2.7']);
  const dnsmasq = { host: '127.0.0.1', port };
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());

  t.test('an answer', async (t) => {
    f.setUpstreams([dnsmasq]);
    const reply = readAnswer(await f.forward(makeQuery('www.example.test', 0x0a0b), 'www.example.test'));
    t.equal(reply.id, 0x0a0b);
    t.equal(reply.rcode, 0);
    t.same(reply.addresses, ['192.0.2.7']);
  });

  t.test('REFUSED (no data, no upstream): the next server answers; alone, REFUSED comes back', async (t) => {
    const other = await answering(t, { addresses: ['192.0.2.8'] });
    f.setUpstreams([dnsmasq, other]);
    t.same(readAnswer(await f.forward(makeQuery('www.elsewhere.test', 1), 'www.elsewhere.test')).addresses, ['192.0.2.8']);
    f.setUpstreams([dnsmasq]);
    const reply = readAnswer(await f.forward(makeQuery('www.elsewhere.test', 2), 'www.elsewhere.test'));
    t.equal(reply.rcode, 5);
    t.equal(reply.id, 2);
  });

  t.test('60 A records: truncated over UDP, complete over TCP', async (t) => {
    f.setUpstreams([dnsmasq]);
    const before = f.stats.tcpRetries;
    const reply = readAnswer(await f.forward(makeQuery('big.hosts.test', 3), 'big.hosts.test'));
    t.equal(reply.tc, false);
    t.same([...reply.addresses].sort(), [...big].sort());
    t.equal(f.stats.tcpRetries, before + 1);
  });
});
