// pkg/dns rr-text.ts: one record in zone-file form, as miekg/dns's NewRR reads it (what CoreDNS's
// template answers are written in).

import t from 'tap';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { rrFromText } from '../../pkg/dns/rr-text.ts';

t.test('every type it reads; TTL and class in either order, or unsaid', async (t) => {
  t.same(rrFromText('a.example. 60 IN A 192.0.2.1'), { name: 'a.example', type: Type.A, class: Class.IN, ttl: 60, data: { address: '192.0.2.1' } });
  t.same(rrFromText('a.example IN 60 AAAA 2001:db8::1'), { name: 'a.example', type: Type.AAAA, class: Class.IN, ttl: 60, data: { address: '2001:db8::1' } }, 'class before TTL; a name without its dot');
  t.same(rrFromText('a.example CNAME b.example.'), { name: 'a.example', type: Type.CNAME, class: Class.IN, ttl: 3600, data: { target: 'b.example' } }, 'TTL 3600 and IN unsaid');
  t.match(rrFromText('7.2.0.192.in-addr.arpa. 5 PTR host.example.'), { type: Type.PTR, data: { target: 'host.example' } });
  t.match(rrFromText('example. 5 NS ns.example.'), { type: Type.NS, data: { target: 'ns.example' } });
  t.match(rrFromText('a.example. 5 TXT "two words" plain "quote \\" inside" ; a comment'), { type: Type.TXT, data: { texts: ['two words', 'plain', 'quote " inside'] } });
  t.match(rrFromText('a.example. 5 MX 10 mail.example.'), { type: Type.MX, data: { preference: 10, exchange: 'mail.example' } });
  t.match(rrFromText('_x._tcp.a.example. 5 SRV 0 5 80 web.example.'), { type: Type.SRV, data: { priority: 0, weight: 5, port: 80, target: 'web.example' } });
  t.match(rrFromText('example. 5 SOA ns.example. admin.example. 1 60 60 60 30'), { type: Type.SOA, data: { mname: 'ns.example', serial: 1, minimum: 30 } });
  t.match(rrFromText('version.bind. 0 CH TXT x'), { class: Class.CH });
});

t.test('what does not read throws', async (t) => {
  for (const [text, message] of [
    ['a.example. 60 IN A 300.1.1.1', /is not an IPv4 address/],
    ['a.example. 60 IN AAAA 192.0.2.1', /is not an IPv6 address/],
    ['a.example. 60 IN NAPTR 1 1 x y z .', /record type "NAPTR" is not one of/],
    ['a.example. 60 IN MX mail.example.', /MX takes 2 data fields/],
    ['a.example. 60 IN SRV 0 5 99999 web.', /SRV port/],
    ['a.example.', /not a record/],
  ] as const) t.throws(() => rrFromText(text), { code: 'DNS_ERR_RR_TEXT', message }, text);
});
