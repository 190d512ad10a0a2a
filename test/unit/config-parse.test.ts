import t from 'tap';
import { ConfigError, parseConfig, parseFederations } from '../../pkg/config/config.ts';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

t.test('empty or absent data gives the defaults', async (t) => {
  const cases: Record<string, string>[] = [{}, { stubDomains: '', upstreamNameservers: '  ', federations: '' }, { stubDomains: 'null', upstreamNameservers: 'null' }];
  for (const data of cases) {
    const c = parseConfig(data);
    t.equal(c.stubDomains.size, 0);
    t.same(c.upstreamNameservers, []);
    t.equal(c.federations.size, 0);
  }
});

t.test('the documented example', async (t) => {
  const c = parseConfig({
    stubDomains: '{"acme.local": ["1.2.3.4", "1.2.3.4:5353"], "Corp.Example.": ["[fd00::1]:53", "ns.corp.example"]}',
    upstreamNameservers: '["8.8.8.8", "8.8.4.4:53", "2001:4860:4860::8888"]',
    federations: 'myfed=example.com, other=Other.Example.',
    'some-other-key': 'ignored',
  });
  t.same([...c.stubDomains], [
    ['acme.local', ['1.2.3.4', '1.2.3.4:5353']],
    ['corp.example', ['[fd00::1]:53', 'ns.corp.example']],
  ]);
  t.same(c.upstreamNameservers, ['8.8.8.8', '8.8.4.4:53', '2001:4860:4860::8888']);
  t.same([...c.federations], [
    ['myfed', 'example.com'],
    ['other', 'other.example'],
  ]);
});

t.test('bad JSON names the key', async (t) => {
  const e1 = configError(() => parseConfig({ stubDomains: '{"acme.local": ["1.2.3.4"]' }));
  t.equal(e1.code, 'CONFIG_JSON');
  t.equal(e1.key, 'stubDomains');
  t.match(e1.message, /^stubDomains: invalid JSON/);
  const e2 = configError(() => parseConfig({ upstreamNameservers: '8.8.8.8' }));
  t.equal(e2.code, 'CONFIG_JSON');
  t.equal(e2.key, 'upstreamNameservers');
});

t.test('JSON of the wrong shape is a JSON error', async (t) => {
  t.equal(configError(() => parseConfig({ stubDomains: '["1.2.3.4"]' })).code, 'CONFIG_JSON');
  t.equal(configError(() => parseConfig({ stubDomains: '{"a.b": "1.2.3.4"}' })).code, 'CONFIG_JSON');
  t.equal(configError(() => parseConfig({ stubDomains: '{"a.b": [1]}' })).code, 'CONFIG_JSON');
  t.equal(configError(() => parseConfig({ upstreamNameservers: '{"a": "1.2.3.4"}' })).code, 'CONFIG_JSON');
  t.equal(configError(() => parseConfig({ upstreamNameservers: '[8]' })).code, 'CONFIG_JSON');
});

t.test('stub domain keys must be DNS-1123 subdomains', async (t) => {
  for (const domain of ['acme_local', '-acme.local', 'acme..local', 'acme.local-', `${'a'.repeat(64)}.local`, 'a b']) {
    const e = configError(() => parseConfig({ stubDomains: JSON.stringify({ [domain]: ['1.2.3.4'] }) }));
    t.equal(e.code, 'CONFIG_INVALID', domain);
    t.equal(e.entry, domain);
    t.ok(e.message.includes(JSON.stringify(domain)), e.message);
  }
  const twice = configError(() => parseConfig({ stubDomains: '{"acme.local": ["1.1.1.1"], "ACME.local.": ["2.2.2.2"]}' }));
  t.match(twice.message, /listed twice/);
});

t.test('stub servers: IP or DNS name, optional port 1-65535', async (t) => {
  const good = ['1.2.3.4', '1.2.3.4:5353', '[fd00::1]:53', 'fd00::1', 'ns.corp.example', 'ns.corp.example:5353', 'NS.Corp.Example.', 'kube-dns.kube-system.svc.cluster.local'];
  const c = parseConfig({ stubDomains: JSON.stringify({ 'corp.example': good }) });
  t.same(c.stubDomains.get('corp.example'), good, 'kept as written');
  for (const bad of ['1.2.3.4:99999', '1.2.3.4:0', '1.2.3.4:', '1.2.3.4:dns', 'ns_corp', '[ns.corp]:53', '[fd00::1]', 'fd00::1]:53', '']) {
    const e = configError(() => parseConfig({ stubDomains: JSON.stringify({ 'corp.example': ['1.1.1.1', bad] }) }));
    t.equal(e.code, 'CONFIG_INVALID', bad);
    t.equal(e.key, 'stubDomains');
    t.equal(e.entry, bad);
    t.ok(e.message.includes(JSON.stringify(bad)) && e.message.includes('"corp.example"'), e.message);
  }
});

t.test('upstreamNameservers: at most 3, IP with optional port, no names', async (t) => {
  const c = parseConfig({ upstreamNameservers: '["1.1.1.1", "[2606:4700::1111]:53", "9.9.9.9:5353"]' });
  t.same(c.upstreamNameservers, ['1.1.1.1', '[2606:4700::1111]:53', '9.9.9.9:5353']);

  const four = configError(() => parseConfig({ upstreamNameservers: '["1.1.1.1","1.0.0.1","8.8.8.8","8.8.4.4"]' }));
  t.equal(four.code, 'CONFIG_INVALID');
  t.match(four.message, /upstreamNameservers: at most 3/);

  for (const bad of ['dns.google', 'dns.google:53', '1.2.3.4:0', '1.2.3.4:65536', '1.2.3', '256.1.1.1', 'fe80::1%eth0', '1.2.3.4:']) {
    const e = configError(() => parseConfig({ upstreamNameservers: JSON.stringify([bad]) }));
    t.equal(e.code, 'CONFIG_INVALID', bad);
    t.equal(e.entry, bad);
    t.ok(e.message.startsWith('upstreamNameservers: invalid nameserver ' + JSON.stringify(bad)), e.message);
  }
});

t.test('federations: name=domain list, not JSON', async (t) => {
  t.same([...parseFederations('a=b.com,c=d.com')], [
    ['a', 'b.com'],
    ['c', 'd.com'],
  ]);
  t.same([...parseFederations('a=b.com,a=c.com')], [['a', 'c.com']], 'a repeated name: the last wins');
  for (const bad of ['a', 'a=b.com,', 'a.b=c.com', '=b.com', 'a=', 'a=b_c.com', '{"a":"b.com"}']) {
    const e = configError(() => parseConfig({ federations: bad }));
    t.equal(e.code, 'CONFIG_INVALID', bad);
    t.equal(e.key, 'federations');
  }
});

t.test('checks run federations, stubDomains, upstreamNameservers in that order', async (t) => {
  const e = configError(() => parseConfig({ federations: 'x', stubDomains: '{', upstreamNameservers: '[' }));
  t.equal(e.key, 'federations');
  const e2 = configError(() => parseConfig({ stubDomains: '{', upstreamNameservers: '[' }));
  t.equal(e2.key, 'stubDomains');
});
