import t from 'tap';
import {
  canonicalIP,
  dashedIP,
  ipFamily,
  IPError,
  ipFromDashed,
  ipFromReverseName,
  reverseName,
} from '../../pkg/cluster/ip.ts';

t.test('canonicalIP: IPv4 dotted quads, Go 1.17 rules', async (t) => {
  t.equal(canonicalIP('10.96.0.1'), '10.96.0.1');
  t.equal(canonicalIP('0.0.0.0'), '0.0.0.0');
  t.equal(canonicalIP('255.255.255.255'), '255.255.255.255');
  for (const bad of ['010.0.0.1', '10.0.0.01', '10.0.0.256', '10.0.0', '10.0.0.1.2', '10..0.1', '10.0.0.1 ', ' 10.0.0.1',
    '1e1.0.0.1', '0x1.0.0.1', '', '-1.0.0.0', '10.0.0.', '.10.0.0.1']) {
    t.equal(canonicalIP(bad), null, `${JSON.stringify(bad)} is refused`);
  }
});

t.test('canonicalIP: IPv6 to RFC 5952 text', async (t) => {
  const cases: Array<[string, string]> = [
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // the first of two equal runs is compressed
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // one zero group stays
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'], // the longest run wins
    ['::', '::'],
    ['::1', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['fd00:10:96:0:0:0:0:a', 'fd00:10:96::a'],
    ['1::', '1::'],
    ['FE80::ABCD', 'fe80::abcd'],
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1'], // IPv4-mapped stays IPv6, in mixed notation
    ['::FFFF:0a00:0001', '::ffff:10.0.0.1'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
    ['::1.2.3.4', '::102:304'],
  ];
  for (const [input, want] of cases) t.equal(canonicalIP(input), want, input);
  for (const bad of ['1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', '1::2::3', ':1', '1:', ':::', '12345::1', 'fe80::1%eth0',
    'g::1', '::ffff:010.0.0.1', '1:2:3:4:5:6:7:1.2.3.4', '::1.2.3', '[::1]']) {
    t.equal(canonicalIP(bad), null, `${JSON.stringify(bad)} is refused`);
  }
});

t.test('ipFamily', async (t) => {
  t.equal(ipFamily('10.0.0.1'), 4);
  t.equal(ipFamily('fd00::1'), 6);
  t.equal(ipFamily('::ffff:10.0.0.1'), 6);
});

t.test('reverseName and ipFromReverseName', async (t) => {
  t.equal(reverseName('10.96.0.1'), '1.0.96.10.in-addr.arpa');
  const v6 = '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa';
  t.equal(reverseName('2001:db8::1'), v6, 'the spec example');
  t.equal(reverseName('2001:0db8:0000::0001'), v6, 'non-canonical text gives the same name');
  t.equal(ipFromReverseName(v6), '2001:db8::1');
  t.equal(ipFromReverseName(v6.toUpperCase() + '.'), '2001:db8::1', 'case and a trailing dot are ignored');
  t.equal(ipFromReverseName('1.0.96.10.in-addr.arpa'), '10.96.0.1');
  t.equal(ipFromReverseName('1.0.96.10.IN-ADDR.ARPA.'), '10.96.0.1');

  for (const ip of ['0.0.0.0', '255.254.253.252', '::', 'fd00:10:96::a', '::ffff:10.0.0.1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']) {
    t.equal(ipFromReverseName(reverseName(ip)), ip, `${ip} round trip`);
  }
  for (const partial of ['0.96.10.in-addr.arpa', 'in-addr.arpa', '.in-addr.arpa', '1.0.96.10.in-addr.arpa.x',
    '01.0.96.10.in-addr.arpa', '256.0.96.10.in-addr.arpa', 'a.1.0.96.10.in-addr.arpa', v6.slice(2), 'ip6.arpa',
    'x' + v6.slice(1), '10.' + v6.slice(2), 'kubernetes.default.svc.cluster.local', '']) {
    t.equal(ipFromReverseName(partial), null, `${JSON.stringify(partial)} is not a complete address`);
  }
  t.throws(() => reverseName('10.0.0.300'), { code: 'IP_ERR_INVALID' });
  t.throws(() => reverseName('web'), IPError);
});

t.test('dashedIP and ipFromDashed', async (t) => {
  const cases: Array<[string, string]> = [
    ['10.0.0.5', '10-0-0-5'],
    ['fd00:10:96::a', 'fd00-10-96--a'],
    ['::1', '0--1'], // a leading '-' gets a '0'
    ['fd00::', 'fd00--0'], // a trailing '-' gets a '0'
    ['::', '0--0'],
    ['2001:db8:0:0:1:0:0:1', '2001-db8--1-0-0-1'],
    ['::ffff:10.0.0.1', '0--ffff-a00-1'], // hex form: a label has no dots
  ];
  for (const [ip, want] of cases) {
    t.equal(dashedIP(ip), want, ip);
    t.equal(ipFromDashed(want), canonicalIP(ip), `${want} back`);
  }
  t.equal(ipFromDashed('FD00--A'), 'fd00::a', 'hex case is ignored');
  t.equal(ipFromDashed('0-0-0-0-0-0-0-1'), '::1', 'an uncompressed form names the address too');
  t.equal(ipFromDashed('--1'), '::1');
  for (const bad of ['10-0-0-256', '10-0-0', '10-0-0-5-6', '010-0-0-1', 'db-0', 'web', '10.0.0.5', '1--2--3', 'fd00-', '',
    '-', 'g--1', 'a'.repeat(64) + '-1']) {
    t.equal(ipFromDashed(bad), null, `${JSON.stringify(bad)} names no address`);
  }
  t.throws(() => dashedIP('not-an-ip'), { code: 'IP_ERR_INVALID' });
});
