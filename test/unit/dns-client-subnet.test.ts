// The forwarder's side of EDNS Client Subnet: the asker's address put into a query (the OPT added or
// its options kept), the scope read back, and the option taken out of a reply.

import t from 'tap';
import { clientSubnetOpt, takeClientSubnet, withClientSubnet } from '../../pkg/dns/client-subnet.ts';

const replyClientScope = (reply: Uint8Array) => takeClientSubnet(reply).scope;
const withoutClientSubnet = (reply: Uint8Array) => takeClientSubnet(reply).wire;
import { encodeMessage, parseMessage } from '../../pkg/dns/codec.ts';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { EdnsOption } from '../../pkg/dns/message.ts';

const COOKIE: EdnsOption = { code: 10, data: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) };
const ecs = (family: number, source: number, scope: number, ...address: number[]): EdnsOption => ({ code: 8, data: new Uint8Array([0, family, source, scope, ...address]) });

function query(options: EdnsOption[] | null): Uint8Array {
  const m = emptyMessage(7);
  m.rd = true;
  m.questions.push({ name: 'db.default.apps.svc.cluster.local', type: Type.A, class: Class.IN });
  if (options !== null) m.edns = { udpSize: 1232, version: 0, do: false, extendedRcode: 0, options };
  return encodeMessage(m).bytes;
}

const optionsOf = (wire: Uint8Array) => parseMessage(Buffer.from(wire)).edns?.options.map((o) => ({ code: o.code, data: [...o.data] }));

t.test('withClientSubnet: the whole address, an OPT added when there is none', async (t) => {
  const out = withClientSubnet(query(null), '10.1.2.3')!;
  const m = parseMessage(Buffer.from(out));
  t.equal(m.questions[0].name, 'db.default.apps.svc.cluster.local', 'the question intact');
  t.same(optionsOf(out), [{ code: 8, data: [0, 1, 32, 0, 10, 1, 2, 3] }]);
  t.same(optionsOf(withClientSubnet(query(null), '::ffff:10.1.2.3')!), [{ code: 8, data: [0, 1, 32, 0, 10, 1, 2, 3] }], 'a v4-mapped address is IPv4');
  t.same(optionsOf(withClientSubnet(query(null), 'fd00::5')!)![0].data.slice(0, 4), [0, 2, 128, 0], 'IPv6: /128');
  t.equal(withClientSubnet(query(null), 'not-an-address'), null);
});

t.test("withClientSubnet: the asker's own options kept, its Client Subnet replaced", async (t) => {
  const out = withClientSubnet(query([COOKIE, ecs(1, 24, 0, 10, 9, 9)]), '10.1.2.3')!;
  t.same(optionsOf(out), [{ code: 10, data: [...COOKIE.data] }, { code: 8, data: [0, 1, 32, 0, 10, 1, 2, 3] }]);
  t.equal(parseMessage(Buffer.from(out)).edns?.udpSize, 1232, "the asker's OPT otherwise as it was");
});

t.test('takeClientSubnet: the scope, and the reply without the option', async (t) => {
  const reply = query([COOKIE, ecs(1, 32, 32, 10, 1, 2, 3)]);
  t.equal(replyClientScope(reply), 32);
  t.equal(replyClientScope(query([COOKIE])), -1);
  t.equal(replyClientScope(query(null)), -1);
  t.same(optionsOf(withoutClientSubnet(reply)), [{ code: 10, data: [...COOKIE.data] }]);
  const none = query([COOKIE]);
  t.equal(withoutClientSubnet(none), none, 'unchanged bytes when there is nothing to take out');
  t.equal(replyClientScope(new Uint8Array(5)), -1, 'too short to read');
});

t.test('takeClientSubnet with an OPT of ours (the asker sent none): the whole OPT taken out, the scope read', async (t) => {
  const reply = query([ecs(1, 32, 32, 10, 1, 2, 3)]);
  const { scope, wire } = takeClientSubnet(reply, true);
  t.equal(scope, 32);
  t.equal(parseMessage(Buffer.from(wire)).edns, null, 'no OPT left');
  t.same(Array.from(wire), Array.from(query(null)), 'the reply as it is without the OPT, ARCOUNT one less');
  const badvers = Buffer.from(reply);
  badvers[badvers.length - 12 - 6] = 1; // the OPT's extended RCODE (the option is its last 12 bytes): BADVERS, not ours to drop
  t.ok(parseMessage(Buffer.from(takeClientSubnet(badvers, true).wire)).edns !== null, 'an extended RCODE keeps its OPT');
});

t.test('clientSubnetOpt: the OPT record the server answers with', async (t) => {
  const m = emptyMessage(1);
  m.questions.push({ name: 'x', type: Type.A, class: Class.IN });
  const wire = Buffer.concat([encodeMessage(m).bytes, Buffer.from(clientSubnetOpt({ family: 1, sourcePrefix: 24, address: Uint8Array.of(10, 1, 2) }, 32, 0), 'latin1')]);
  wire.writeUInt16BE(1, 10); // ARCOUNT
  t.same(optionsOf(wire), [{ code: 8, data: [0, 1, 24, 32, 10, 1, 2] }], 'source 24 (3 address bytes), scope 32');
});
