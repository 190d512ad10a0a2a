// A thread's learned copy of the owner's cache partition (pkg/dnsthreads/askers.ts): an asker not
// learned has none (its answers are not kept); what the owner's reply tells is kept unless a change
// was heard of after the reply was read; a change forgets the address in both of its forms.

import t from 'tap';
import { AskerPartitions } from '../../pkg/dnsthreads/askers.ts';
import { emptyOptView } from '../../pkg/dns/codec.ts';

const plain = emptyOptView();
const subnet = { ...emptyOptView(), ecsFamily: 1 };

t.test('learned per address, apart for queries with and without a Client Subnet', async (t) => {
  const askers = new AskerPartitions(0);
  t.equal(askers.of('10.244.1.7', plain), -1, 'not learned: no partition');
  askers.learn('10.244.1.7', false, 3, 0);
  t.equal(askers.of('10.244.1.7', plain), 3);
  t.equal(askers.of('10.244.1.7', subnet), -1, 'with a Client Subnet: learned apart (a trusted sender speaks for others)');
  askers.learn('10.244.1.7', true, 0, 0);
  t.equal(askers.of('10.244.1.7', subnet), 0);
});

t.test("a reply read before a change the thread has heard of is not kept: the change may be its asker's", async (t) => {
  const askers = new AskerPartitions(5);
  t.notOk(askers.forget('10.244.1.7', 6), 'nothing learned: nothing forgotten');
  askers.learn('10.244.1.7', false, 3, 5);
  t.equal(askers.of('10.244.1.7', plain), -1, 'read at change 5, heard of 6: not kept');
  askers.learn('10.244.1.7', false, 4, 6);
  t.equal(askers.of('10.244.1.7', plain), 4, 'read since: kept');
});

t.test('a change forgets the address, as a mapped IPv6 asker too; null forgets every asker', async (t) => {
  const askers = new AskerPartitions(0);
  askers.learn('::ffff:10.244.1.7', false, 3, 0);
  askers.learn('10.244.1.7', true, 2, 0);
  askers.learn('10.244.1.8', false, 4, 0);
  t.ok(askers.forget('10.244.1.7', 1), 'it had been learned');
  t.equal(askers.of('::ffff:10.244.1.7', plain), -1);
  t.equal(askers.of('10.244.1.7', subnet), -1);
  t.equal(askers.of('10.244.1.8', plain), 4, 'other askers kept');
  t.ok(askers.forget(null, 2));
  t.equal(askers.of('10.244.1.8', plain), -1);
  t.notOk(askers.forget(null, 3), 'none left');
});
