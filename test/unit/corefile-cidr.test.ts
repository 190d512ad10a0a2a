// pkg/corefile cidr.ts: a CIDR where CoreDNS takes a zone, as the reverse zones CoreDNS makes of it.

import t from 'tap';
import { cidrReverseZones } from '../../pkg/corefile/cidr.ts';

t.test('octet and nibble boundaries, and what lies between them', async (t) => {
  t.same(cidrReverseZones('10.0.0.0/8'), ['10.in-addr.arpa']);
  t.same(cidrReverseZones('192.168.1.0/24'), ['1.168.192.in-addr.arpa']);
  t.same(cidrReverseZones('172.16.0.0/12'), Array.from({ length: 16 }, (_, i) => `${16 + i}.172.in-addr.arpa`));
  t.same(cidrReverseZones('10.96.0.0/16'), ['96.10.in-addr.arpa']);
  t.same(cidrReverseZones('fd00::/8'), ['d.f.ip6.arpa']);
  t.same(cidrReverseZones('fd00::/7'), ['c.f.ip6.arpa', 'd.f.ip6.arpa']);
  t.same(cidrReverseZones('2001:db8::/32'), ['8.b.d.0.1.0.0.2.ip6.arpa']);
  for (const notCidr of ['cluster.local', '10.0.0.0', '10.0.0.0/33', '300.0.0.0/8', 'in-addr.arpa']) t.equal(cidrReverseZones(notCidr), null, notCidr);
});
