// pkg/zonefile parse.ts: a zone file as CoreDNS's file plugin reads one, and what it refuses, by line.

import t from 'tap';
import { Type } from '../../pkg/dns/constants.ts';
import { parseZoneFile } from '../../pkg/zonefile/parse.ts';
import { ZoneData } from '../../pkg/zonefile/zone.ts';

const ZONE = `$ORIGIN example.net.
$TTL 600
@ IN SOA ns1 hostmaster ( 7 ; serial
   60 60 60 30 )
  IN NS ns1
ns1 IN A 192.0.2.53
www 30 A 192.0.2.80 ; a comment
    AAAA 2001:db8::80
sub.example.net. IN NS ns.sub
`;

t.test('origin, $TTL, relative names, a blank owner, parentheses, comments', async (t) => {
  const rrs = parseZoneFile(ZONE, 'example.net');
  t.same(rrs.map((r) => `${r.name} ${r.ttl} ${r.type}`), ['example.net 600 6', 'example.net 600 2', 'ns1.example.net 600 1', 'www.example.net 30 1', 'www.example.net 600 28', 'sub.example.net 600 2']);
  t.match(rrs[0].data, { mname: 'ns1.example.net', rname: 'hostmaster.example.net', serial: 7, minimum: 30 });
  t.same(rrs[5].data, { target: 'ns.sub.example.net' });
  const z = new ZoneData('example.net', rrs);
  t.equal(z.serial, 7);
  t.match(z.lookup('www.example.net', Type.A), { rcode: 0, aa: true, answers: [{ data: { address: '192.0.2.80' } }] });
  t.match(z.lookup('a.sub.example.net', Type.A), { aa: false, answers: [], authorities: [{ type: Type.NS }] }, 'a referral below a delegation');
});

t.test('what does not read: an error naming the line', async (t) => {
  for (const [text, message] of [
    ['$INCLUDE other.db\n', /^line 1: \$INCLUDE other\.db is not served/],
    ['@ IN SOA ns1 hostmaster ( 1 2 3 4 5\n', /^line 1: a `\(` is never closed/],
    ['  IN A 192.0.2.1\n', /^line 1: a record without an owner/],
    ['www IN A 300.0.0.1\n', /^line 1: A: "300\.0\.0\.1" is not an IPv4 address/],
    ['www IN A 192.0.2.1\n', /no SOA record for example\.net/],
    ['other.org. IN SOA ns hm 1 1 1 1 1\n', /the SOA's owner other\.org is not the zone example\.net/],
  ] as const) t.throws(() => parseZoneFile(text, 'example.net'), { code: 'ZONE_FILE_INVALID', message }, text);
});
