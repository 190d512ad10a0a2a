import t from 'tap';
import { ConfigError, configVersion, parseStubServer, parseUpstream } from '../../pkg/config/config.ts';

t.test('parseUpstream', async (t) => {
  t.same(parseUpstream('8.8.8.8'), { host: '8.8.8.8', port: 53 });
  t.same(parseUpstream('8.8.8.8:5353'), { host: '8.8.8.8', port: 5353 });
  t.same(parseUpstream('[fd00::1]:5300'), { host: 'fd00::1', port: 5300 });
  t.same(parseUpstream('fd00::1'), { host: 'fd00::1', port: 53 });
  t.same(parseUpstream('10.0.0.10', 10053), { host: '10.0.0.10', port: 10053 });
  for (const bad of ['dns.google', '8.8.8.8:0', '[fd00::1]', '8.8.8.8:x', '']) {
    t.throws(() => parseUpstream(bad), { name: 'ConfigError', code: 'CONFIG_INVALID', entry: bad }, bad);
  }
  t.throws(() => parseUpstream('dns.google'), ConfigError);
});

t.test('parseStubServer keeps names', async (t) => {
  t.same(parseStubServer('ns.corp.example:5353'), { host: 'ns.corp.example', port: 5353 });
  t.same(parseStubServer('ns.corp.example'), { host: 'ns.corp.example', port: 53 });
  t.same(parseStubServer('[fd00::1]:53'), { host: 'fd00::1', port: 53 });
  t.throws(() => parseStubServer('ns_corp:53'), { code: 'CONFIG_INVALID' });
});

t.test('configVersion: sha256 over name NUL data NUL, sorted by name', async (t) => {
  t.equal(configVersion(new Map()), '');
  // Computed independently: printf 'a\0x\0b\0y\0' | sha256sum
  const v = configVersion(new Map([['b', 'y'], ['a', 'x']]));
  t.equal(v, '938fbc10036622392fd65d18a55d15b7e80ee4a3583ca4fadda2d0c1f04efbe4');
  t.equal(configVersion(new Map([['a', 'x'], ['b', 'y']])), v, 'independent of insertion order');
  t.not(v, configVersion(new Map([['a', 'xb'], ['', 'y']])), 'the separators keep names and data apart');
  t.equal(v, configVersion(new Map([['a', Buffer.from('x')], ['b', Buffer.from('y')]])), 'bytes and text agree');
});
