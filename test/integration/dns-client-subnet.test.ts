// EDNS Client Subnet (RFC 7871) through the server, asked with real dig: the handler sees the
// asker's subnet, an answer scoped to it carries the option back and is never cached, an answer
// without a scope carries none and is cached for everyone, and a malformed option is FORMERR.

import t from 'tap';
import { clientSubnetText } from '../../pkg/dns/client-subnet.ts';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Answer, Query } from '../../pkg/dns/server.ts';
import { answers, dig } from '../helpers/dig.ts';
import { startServer } from '../helpers/dns-server.ts';

/** Answers TXT "<address>/<prefix>" (or "none"); scoped to the asker when the name starts with "scoped". */
function echoSubnet(calls: Query[]) {
  return (q: Query): Answer => {
    calls.push(q);
    const m = emptyMessage();
    m.aa = true;
    const s = q.clientSubnet;
    m.answers.push({ name: q.qname, type: Type.TXT, class: Class.IN, ttl: 30, data: { texts: [s ? clientSubnetText(s) : 'none'] } });
    return { message: m, cacheable: true, clientScope: q.qname.startsWith('scoped') ? 32 : undefined };
  };
}

t.test('a scoped answer: the option comes back with the scope, and each asker is answered afresh', async (t) => {
  const calls: Query[] = [];
  const { port } = await startServer(t, { handler: echoSubnet(calls) });
  const plain = await dig(port, 'scoped.example', 'TXT');
  t.same(answers(plain), ['"none"'], 'a query without the option: no subnet');
  t.notMatch(plain.raw, /CLIENT-SUBNET/);
  const one = await dig(port, 'scoped.example', 'TXT', ['+subnet=10.1.2.3/32']);
  t.same(answers(one), ['"10.1.2.3/32"']);
  t.match(one.raw, /CLIENT-SUBNET: 10\.1\.2\.3\/32\/32/, 'echoed with SCOPE 32');
  const two = await dig(port, 'scoped.example', 'TXT', ['+subnet=10.9.9.9/32']);
  t.same(answers(two), ['"10.9.9.9/32"'], 'not served from the cache to another asker');
  t.equal(calls.length, 3, 'a scoped answer to an asker without the option is not cached either');
});

t.test('an answer without a scope: no option in the reply, cached for every asker', async (t) => {
  const calls: Query[] = [];
  const { port } = await startServer(t, { handler: echoSubnet(calls) });
  const one = await dig(port, 'shared.example', 'TXT', ['+subnet=10.1.2.0/24']);
  t.same(answers(one), ['"10.1.2.0/24"'], 'a /24 as the handler sees it');
  t.notMatch(one.raw, /CLIENT-SUBNET/, 'RFC 7871 §7.3: no option means valid for every asker');
  const two = await dig(port, 'shared.example', 'TXT', ['+subnet=10.9.9.9/32']);
  t.same(answers(two), ['"10.1.2.0/24"'], 'the cached answer');
  t.equal(calls.length, 1);
});

t.test('IPv6 subnets', async (t) => {
  const calls: Query[] = [];
  const { port } = await startServer(t, { handler: echoSubnet(calls) });
  const r = await dig(port, 'scoped.v6.example', 'TXT', ['+subnet=fd00:1::5/128']);
  t.same(answers(r), ['"fd00:1::5/128"']);
  t.match(r.raw, /CLIENT-SUBNET: fd00:1::5\/128\/32/, 'the scope as the handler gave it');
});

t.test('a malformed option is FORMERR (RFC 7871 §7.1.1), and counted', async (t) => {
  const calls: Query[] = [];
  const reasons: string[] = [];
  const { port } = await startServer(t, { handler: echoSubnet(calls), observer: { malformed: (why) => void reasons.push(why) } });
  const cases = {
    'SCOPE not 0 in a query': '0001200a0a010203',
    'address longer than the prefix': '000118000a010203',
    'bits beyond the prefix': '000117000a0101',
    'unknown family': '0003200000000000',
    'prefix longer than the family': '000121000a01020300',
  };
  for (const [why, hex] of Object.entries(cases)) {
    const r = await dig(port, 'scoped.example', 'TXT', [`+ednsopt=8:${hex}`]);
    t.equal(r.status, 'FORMERR', why);
  }
  t.equal(calls.length, 0, 'the handler never saw them');
  t.same(reasons, Object.keys(cases).map(() => 'bad-ecs'), 'counted as malformed, reason bad-ecs');
  const ok = await dig(port, 'scoped.example', 'TXT', ['+ednsopt=8:000118000a0102']);
  t.same(answers(ok), ['"10.1.2.0/24"'], 'a well-formed one, written by hand');
});
