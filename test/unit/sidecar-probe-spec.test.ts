// --probe values as the original reads them, our default type, and every rejection with its reason.

import t from 'tap';
import { parseProbeSpec, parseProbeSpecs } from '../../pkg/sidecar/probe-spec.ts';
import type { ProbeSpec } from '../../pkg/sidecar/probe-spec.ts';

const ok = (text: string): ProbeSpec => {
  const r = parseProbeSpec(text);
  if (typeof r === 'string') throw new Error(`${text}: ${r}`);
  return r;
};

t.test('the official manifest\'s probes', async (t) => {
  t.same(ok('kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV'), {
    label: 'kubedns', server: { host: '127.0.0.1', port: 10053 }, name: 'kubernetes.default.svc.cluster.local.', intervalMs: 5000, type: 33, typeName: 'SRV',
  });
  t.same(ok('dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV').server, { host: '127.0.0.1', port: 53 });
});

t.test('defaults: port 53, the name made FQDN, 5 s, type A (not the original\'s ANY)', async (t) => {
  const p = ok('my_DNS_1,10.0.0.10,example.com');
  t.same(p.server, { host: '10.0.0.10', port: 53 });
  t.equal(p.name, 'example.com.');
  t.equal(p.intervalMs, 5000);
  t.equal(p.typeName, 'A');
  t.equal(p.type, 1);
  t.equal(ok('x,10.0.0.10,example.com.').name, 'example.com.', 'an FQDN stays as it is');
});

t.test('IPv6 servers, with and without a port', async (t) => {
  t.same(ok('v6,[::1]:5353,a.b').server, { host: '::1', port: 5353 });
  t.same(ok('v6,fd00::10,a.b').server, { host: 'fd00::10', port: 53 });
});

t.test('intervals: whole seconds as the original, or a Go duration', async (t) => {
  t.equal(ok('x,127.0.0.1,a.b,1').intervalMs, 1000);
  t.equal(ok('x,127.0.0.1,a.b,30,A').intervalMs, 30_000);
  t.equal(ok('x,127.0.0.1,a.b,500ms').intervalMs, 500);
  t.equal(ok('x,127.0.0.1,a.b,1m30s,AAAA').intervalMs, 90_000);
});

t.test('types A, AAAA, ANY (still allowed when asked for) and SRV', async (t) => {
  t.same(['A', 'AAAA', 'ANY', 'SRV'].map((type) => ok(`x,127.0.0.1,a.b,5,${type}`).type), [1, 28, 255, 33]);
});

t.test('rejections name the problem', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['kubedns,127.0.0.1', /3 to 5 fields, got 2/],
    ['a,127.0.0.1,a.b,5,A,extra', /3 to 5 fields, got 6/],
    ['kube-dns,127.0.0.1,a.b', /label "kube-dns" must match \^\[a-zA-Z0-9_\]\+\$/],
    [',127.0.0.1,a.b', /label "" must match/],
    ['x,kube-dns.local,a.b', /server "kube-dns.local": not an IP address/],
    ['x,127.0.0.1:99999,a.b', /server "127.0.0.1:99999": the port must be 1-65535/],
    ['x,127.0.0.1:dns,a.b', /port is not a number/],
    ['x,127.0.0.1,', /the name is empty/],
    ['x,127.0.0.1,a..b', /name "a..b" is not a valid DNS name/],
    [`x,127.0.0.1,${'a'.repeat(64)}.com`, /is not a valid DNS name/],
    ['x,127.0.0.1,a.b,0', /interval "0" must be positive/],
    ['x,127.0.0.1,a.b,-5', /interval "-5" must be positive/],
    ['x,127.0.0.1,a.b,five', /interval "five" is neither whole seconds nor a duration/],
    ['x,127.0.0.1,a.b,5,MX', /type "MX" must be one of A, AAAA, ANY, SRV/],
    ['x,127.0.0.1,a.b,5,srv', /type "srv" must be one of/],
  ];
  for (const [text, reason] of cases) {
    const r = parseProbeSpec(text);
    t.type(r, 'string', text);
    t.match(r, reason, text);
  }
});

t.test('a list: every probe, or the first problem naming its value; labels are unique', async (t) => {
  const all = parseProbeSpecs(['a,127.0.0.1,a.b', 'b,127.0.0.1:10053,c.d,1,SRV']);
  t.same(typeof all === 'string' ? all : all.map((p) => p.label), ['a', 'b']);
  t.equal(parseProbeSpecs(['a,127.0.0.1,a.b', 'b,127.0.0.1,c.d,x']), 'probe "b,127.0.0.1,c.d,x": interval "x" is neither whole seconds nor a duration such as 500ms');
  t.equal(parseProbeSpecs(['a,127.0.0.1,a.b', 'a,127.0.0.2,c.d']), 'probe "a,127.0.0.2,c.d": label "a" is already used by another probe');
  t.same(parseProbeSpecs([]), []);
});
