import t from 'tap';
import { Class, Rcode, Type } from '../../pkg/dns/constants.ts';
import { encodeMessage, parseMessage, readQuestion } from '../../pkg/dns/codec.ts';
import { emptyMessage } from '../../pkg/dns/message.ts';
import type { Message } from '../../pkg/dns/message.ts';
import { errorReply, render, renderState, sharedTemplate, suffixStart, templateFromEncoded, templateFromWire } from '../../pkg/dns/template.ts';
import { Packet } from 'dns2';

function request(name: string, opts: { id?: number; rd?: boolean; cd?: boolean; edns?: Message['edns'] } = {}): Buffer {
  const m = emptyMessage(opts.id ?? 0xbeef);
  m.rd = opts.rd ?? true;
  m.cd = opts.cd ?? false;
  m.questions.push({ name, type: Type.A, class: Class.IN });
  m.edns = opts.edns ?? null;
  return encodeMessage(m).bytes;
}
const EDNS = (d: boolean): Message['edns'] => ({ udpSize: 1232, version: 0, do: d, extendedRcode: 0, options: [] });

/** A stored answer for "web.example": 3 A records, 1 NS, 2 glue A records. */
function stored(): ReturnType<typeof templateFromEncoded> {
  const m = emptyMessage();
  m.qr = true;
  m.aa = true;
  m.questions.push({ name: 'web.example', type: Type.A, class: Class.IN });
  for (let i = 1; i <= 3; i++) m.answers.push({ name: 'web.example', type: Type.A, class: Class.IN, ttl: 30, data: { address: `10.0.0.${i}` } });
  m.authorities.push({ name: 'example', type: Type.NS, class: Class.IN, ttl: 30, data: { target: 'ns.example' } });
  m.additionals.push({ name: 'ns.example', type: Type.A, class: Class.IN, ttl: 30, data: { address: '10.9.9.9' } });
  m.additionals.push({ name: 'ns.example', type: Type.AAAA, class: Class.IN, ttl: 30, data: { address: 'fd00::9' } });
  const enc = encodeMessage(m);
  return templateFromEncoded(enc, 12 + 13 + 4, Rcode.NOERROR);
}

t.test('render patches ID, RD, CD and the asker\'s name case; answers echo it', async (t) => {
  const tpl = stored();
  const req = request('WeB.ExAmPlE', { id: 777, rd: false, cd: true });
  const out = parseMessage(render(tpl, req, readQuestion(req) - 4, null, 512, 0));
  t.match(out, { id: 777, qr: true, aa: true, rd: false, cd: true, tc: false, edns: null });
  t.equal(out.questions[0].name, 'WeB.ExAmPlE');
  t.same(out.answers.map((a) => a.name), ['WeB.ExAmPlE', 'WeB.ExAmPlE', 'WeB.ExAmPlE']);
  t.equal(out.additionals.length, 2);
  t.equal(renderState.truncated, false);
  t.equal(tpl.bytes.includes('WeB'), false, 'the template itself is untouched');
});

t.test('render appends our OPT (4096, DO copied) only when the request had one', async (t) => {
  const tpl = stored();
  for (const d of [true, false]) {
    const req = request('web.example', { edns: EDNS(d) });
    const out = parseMessage(render(tpl, req, readQuestion(req) - 4, d, 1232, 0));
    t.same(out.edns, { udpSize: 4096, version: 0, do: d, extendedRcode: 0, options: [] });
    t.equal(out.additionals.length, 2);
  }
});

t.test('render cuts the additional section, then falls back to TC, per request', async (t) => {
  const tpl = stored();
  const req = request('web.example', { edns: EDNS(false) });
  const nameEnd = readQuestion(req) - 4;
  const full = render(tpl, req, nameEnd, false, 4096, 0).length;

  const cut = render(tpl, req, nameEnd, false, full - 1, 0);
  t.equal(renderState.truncated, false);
  t.equal(cut.length, tpl.authorityEnd + 11);
  t.match(parseMessage(cut), { tc: false, answers: { length: 3 }, authorities: { length: 1 }, additionals: [], edns: { udpSize: 4096 } });

  const tc = render(tpl, req, nameEnd, false, tpl.authorityEnd, 0);
  t.equal(renderState.truncated, true);
  t.match(parseMessage(tc), { tc: true, answers: [], authorities: [], additionals: [], edns: { udpSize: 4096 }, questions: [{ name: 'web.example' }] });

  // The same template still renders whole for the next request.
  t.equal(render(tpl, req, nameEnd, false, 4096, 0).length, full);
});

t.test('TCP headroom holds the 2-byte length prefix', async (t) => {
  const tpl = stored();
  const req = request('web.example');
  const out = render(tpl, req, readQuestion(req) - 4, null, 65535, 2);
  t.equal(out.readUInt16BE(0), out.length - 2);
  t.equal(parseMessage(out.subarray(2)).answers.length, 3);
});

t.test('a relayed wire answer: its OPT is set aside and used only for EDNS askers', async (t) => {
  const up = emptyMessage(1);
  up.qr = true;
  up.ra = true;
  up.rcode = Rcode.NXDOMAIN;
  up.questions.push({ name: 'gone.example', type: Type.A, class: Class.IN });
  up.authorities.push({
    name: 'example', type: Type.SOA, class: Class.IN, ttl: 60,
    data: { mname: 'ns.example', rname: 'root.example', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 },
  });
  up.additionals.push({ name: 'x.example', type: Type.TXT, class: Class.IN, ttl: 1, data: { texts: ['glue'] } });
  up.edns = { udpSize: 1400, version: 0, do: false, extendedRcode: 0, options: [{ code: 3, data: Buffer.from('nsid') }] };
  const tpl = templateFromWire(encodeMessage(up).bytes);
  t.equal(tpl.arcount, 1);
  t.equal(tpl.rcode, Rcode.NXDOMAIN);
  t.ok(tpl.opt);

  const plain = request('GONE.example', { id: 5 });
  const a = parseMessage(render(tpl, plain, readQuestion(plain) - 4, null, 512, 0));
  t.match(a, { id: 5, rcode: Rcode.NXDOMAIN, ra: true, edns: null, questions: [{ name: 'GONE.example' }], additionals: { length: 1 } });

  const withOpt = request('gone.example', { edns: EDNS(true) });
  const b = parseMessage(render(tpl, withOpt, readQuestion(withOpt) - 4, true, 1232, 0));
  t.match(b, { edns: { udpSize: 1400, do: true, options: [{ code: 3 }] }, additionals: { length: 1 } });
  t.equal(Buffer.from(b.edns!.options[0].data).toString(), 'nsid');
  const noDo = request('gone.example', { edns: EDNS(false) });
  t.equal(parseMessage(render(tpl, noDo, readQuestion(noDo) - 4, false, 1232, 0)).edns?.do, false, 'DO is the asker\'s');

  const nonRoot = encodeMessage(up).bytes;
  const optAt = nonRoot.length - 11 - 8; // OPT: root byte, type, class, TTL, RDLENGTH, 8 bytes of NSID option
  t.equal(nonRoot.readUInt16BE(optAt + 1), Type.OPT);
  const broken = Buffer.concat([nonRoot.subarray(0, optAt), Buffer.from([1, 0x61, 0]), nonRoot.subarray(optAt + 1)]);
  t.throws(() => templateFromWire(broken), { code: 'DNS_ERR_OPT' });
});

t.test('templateFromWire rejects a reply it cannot walk', async (t) => {
  t.throws(() => templateFromWire(new Uint8Array(5)), { code: 'DNS_ERR_SHORT' });
  const bad = Buffer.from([0, 1, 0x81, 0x80, 0, 0, 0, 1, 0, 0, 0, 0, 0x80, 0]);
  t.throws(() => templateFromWire(bad), { code: 'DNS_ERR_LABEL' });
  const short = Buffer.from([0, 1, 0x81, 0x80, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 9, 1]);
  t.throws(() => templateFromWire(short), { code: 'DNS_ERR_SHORT' });
});

t.test('errorReply: FORMERR echoes the question, BADVERS carries an OPT', async (t) => {
  const req = request('Q.example', { id: 99, cd: true, edns: { udpSize: 512, version: 1, do: true, extendedRcode: 0, options: [] } });
  const qEnd = readQuestion(req);
  const formerr = parseMessage(errorReply(req, Rcode.FORMERR, qEnd, null, 0));
  t.match(formerr, { id: 99, qr: true, rd: true, cd: true, rcode: Rcode.FORMERR, questions: [{ name: 'Q.example' }], edns: null });
  const bare = parseMessage(errorReply(req, Rcode.FORMERR, -1, null, 0));
  t.same(bare.questions, []);
  const badvers = parseMessage(errorReply(req, Rcode.BADVERS, qEnd, true, 0));
  t.match(badvers, { rcode: Rcode.BADVERS, edns: { version: 0, do: true, udpSize: 4096, extendedRcode: 1 } });
  const tcp = errorReply(req, Rcode.NOTIMP, qEnd, null, 2);
  t.equal(tcp.readUInt16BE(0), tcp.length - 2);
});

/** A negative answer for `zone`'s apex question: the SOA only (what kube-dns hands over with `below`). */
function negative(zone: string, rcode: number) {
  const m = emptyMessage();
  m.qr = true;
  m.aa = true;
  m.rcode = rcode;
  m.questions.push({ name: zone, type: Type.A, class: Class.IN });
  m.authorities.push({
    name: zone, type: Type.SOA, class: Class.IN, ttl: 30,
    data: { mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: 7, refresh: 7200, retry: 1800, expire: 86400, minimum: 30 },
  });
  const enc = encodeMessage(m);
  return sharedTemplate(enc, 12 + zone.length + 2 + 4, rcode)!;
}

t.test('a shared template answers every name below its zone, pointers moved past the longer name', async (t) => {
  const tpl = negative('cluster.local', Rcode.NXDOMAIN);
  t.ok(tpl.pointers, 'pointers noted');
  for (const name of ['cluster.local', 'x.cluster.local', 'Some.Long.Made-Up.Name.default.svc.CLUSTER.local']) {
    for (const [edns, headroom] of [[null, 0], [true, 2]] as const) {
      const req = request(name, { id: 42, edns: edns === null ? null : EDNS(true) });
      const out = render(tpl, req, readQuestion(req) - 4, edns, 512, headroom);
      if (headroom === 2) t.equal(out.readUInt16BE(0), out.length - 2);
      const body = out.subarray(headroom);
      for (const m of [parseMessage(body), Packet.parse(body)]) {
        const soa = m.authorities[0] as unknown as Record<string, unknown>;
        t.match(soa, { name: /^cluster\.local$/i, ttl: 30 });
      }
      const m = parseMessage(body);
      t.match(m, { id: 42, rcode: Rcode.NXDOMAIN, aa: true, answers: [], questions: [{ name, type: Type.A }] });
      // The SOA's names point into the asker's name, so they echo its case (as a per-name answer's do).
      t.match(m.authorities[0].data, { mname: /^ns\.dns\.cluster\.local$/i, rname: /^hostmaster\.cluster\.local$/i, serial: 7, minimum: 30 });
      t.equal(m.edns?.do, edns === null ? undefined : true);
    }
  }
  const aaaa = request('web.default.svc.cluster.local');
  aaaa.writeUInt16BE(Type.AAAA, readQuestion(aaaa) - 4);
  t.equal(parseMessage(render(tpl, aaaa, readQuestion(aaaa) - 4, null, 512, 0)).questions[0].type, Type.AAAA, "the asker's type");
});

t.test('suffixStart: a name below the suffix at a label boundary, and no other', async (t) => {
  const at = (name: string, suffixWire: number) => {
    const req = request(name);
    return suffixStart(req, readQuestion(req) - 4, suffixWire);
  };
  const wire = 'cluster.local'.length + 2;
  t.equal(at('a.cluster.local', wire), 14);
  t.equal(at('cluster.local', wire), 12);
  t.equal(at('xcluster.local', wire), -1, 'not at a label boundary');
  t.equal(at('local', wire), -1, 'shorter than the suffix');
});

t.test('answers, additional records or TC make an answer unshareable', async (t) => {
  const m = emptyMessage();
  m.questions.push({ name: 'zone', type: Type.A, class: Class.IN });
  m.answers.push({ name: 'zone', type: Type.A, class: Class.IN, ttl: 1, data: { address: '10.0.0.1' } });
  t.equal(sharedTemplate(encodeMessage(m), 12 + 6 + 4, 0), null);
});
