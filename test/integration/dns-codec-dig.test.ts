import t from 'tap';
import dgram from 'node:dgram';
import { Class, Type } from '../../pkg/dns/constants.ts';
import { encodeMessage, parseMessage } from '../../pkg/dns/codec.ts';
import type { Message } from '../../pkg/dns/message.ts';
import { dig } from '../helpers/dig.ts';

// dig (BIND's encoder and decoder) as a second independent implementation: our decoder reads
// the query bytes dig sends, and dig reads the answer our encoder builds.

t.test('we read dig\'s query and dig reads our answer', async (t) => {
  const sock = dgram.createSocket('udp4');
  t.teardown(() => new Promise<void>((r) => sock.close(() => r())));
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const port = sock.address().port;
  let seen: Message | null = null;
  sock.on('message', (buf, rinfo) => {
    const q = parseMessage(buf);
    seen = q;
    const name = q.questions[0].name;
    const r: Message = {
      ...q,
      qr: true,
      aa: true,
      ra: false,
      additionals: [],
      edns: { udpSize: 4096, version: 0, do: q.edns?.do ?? false, extendedRcode: 0, options: [] },
      answers: [
        { name, type: Type.SRV, class: Class.IN, ttl: 30, data: { priority: 10, weight: 100, port: 443, target: 'Web.Example' } },
        { name, type: Type.TXT, class: Class.IN, ttl: 30, data: { texts: ['a b', 'quote"d'] } },
      ],
      authorities: [{ name: 'example', type: Type.SOA, class: Class.IN, ttl: 60, data: { mname: 'ns.example', rname: 'hostmaster.example', serial: 2026, refresh: 28800, retry: 7200, expire: 604800, minimum: 60 } }],
    };
    r.additionals.push(
      { name: 'Web.Example', type: Type.AAAA, class: Class.IN, ttl: 30, data: { address: '2001:db8:0:0:1::1' } },
      { name: 'Web.Example', type: Type.MX, class: Class.IN, ttl: 30, data: { preference: 5, exchange: 'mail.example' } },
    );
    sock.send(encodeMessage(r).bytes, rinfo.port, rinfo.address);
  });

  const { raw: out } = await dig(port, '_https._tcp.Web.Example', 'SRV', ['+dnssec', '+bufsize=1232', '+nocmd', '+nostats']);
  const q = seen as Message | null;
  t.ok(q, 'dig\'s query arrived');
  t.match(q, {
    qr: false,
    opcode: 0,
    rd: true,
    ad: true, // dig sets AD in queries by default
    questions: [{ name: '_https._tcp.Web.Example', type: Type.SRV, class: Class.IN }],
    edns: { udpSize: 1232, version: 0, do: true },
  });
  t.ok(q?.edns?.options.some((o) => o.code === 10), 'dig sent a COOKIE option (code 10)');

  t.match(out, /status: NOERROR/);
  t.match(out, /_https\._tcp\.Web\.Example\.\s+30\s+IN\s+SRV\s+10 100 443 Web\.Example\./);
  t.match(out, /_https\._tcp\.Web\.Example\.\s+30\s+IN\s+TXT\s+"a b" "quote\\"d"/);
  // Compression is case-insensitive, so suffixes shared with the question come out as "Example".
  t.match(out, /\nexample\.\s+60\s+IN\s+SOA\s+ns\.example\. hostmaster\.example\. 2026 28800 7200 604800 60/i);
  t.match(out, /Web\.Example\.\s+30\s+IN\s+AAAA\s+2001:db8::1:0:0:1/);
  t.match(out, /Web\.Example\.\s+30\s+IN\s+MX\s+5 mail\.example\./i);
  t.match(out, /EDNS: version: 0, flags: do; udp: 4096/);
  t.notMatch(out, /malformed|FORMERR|WARNING: Message has/i);
});
