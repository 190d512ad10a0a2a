// ServiceEntries as DNS reads them: what is kept of one (hosts, single addresses, STATIC endpoints,
// NONE skipped), and which entry answers a name (exact host, else the nearest wildcard).
import t from 'tap';
import { trimServiceEntry } from '../../pkg/serviceentry/trim.ts';
import { ServiceEntryNames } from '../../pkg/serviceentry/names.ts';
import type { KubeObject } from '../../pkg/source/source.ts';

const se = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'networking.istio.io/v1', kind: 'ServiceEntry', metadata: { name, namespace: 'istio' }, spec });

t.test('trim: hosts lowercased, single addresses kept, wider CIDRs and bad values dropped with a problem', async (t) => {
  const r = trimServiceEntry(se('ext', { hosts: ['*.Test.Global.', 'api.example.com', 'nodots', 7], addresses: ['127.255.0.2', '10.0.0.0/24', '10.0.0.9/32', 'fd00::1/128', 'bogus'], resolution: 'DNS' }));
  t.same(r.value, { namespace: 'istio', name: 'ext', hosts: ['*.test.global', 'api.example.com'], addresses: ['127.255.0.2', '10.0.0.9', 'fd00::1'] });
  t.same(r.problems, [
    'ServiceEntry istio/ext: host "nodots" is not a DNS name, dropped',
    'ServiceEntry istio/ext: host 7 is not a DNS name, dropped',
    'ServiceEntry istio/ext: address "10.0.0.0/24" is not a single address, skipped',
    'ServiceEntry istio/ext: address "bogus" is not a single address, skipped',
  ]);
});

t.test('trim: STATIC without addresses answers with its endpoints; NONE and nothing to answer are skipped', async (t) => {
  t.same(trimServiceEntry(se('s', { hosts: ['db.example'], resolution: 'STATIC', endpoints: [{ address: '192.0.2.1' }, { address: '192.0.2.2' }] })).value?.addresses, ['192.0.2.1', '192.0.2.2']);
  t.same(trimServiceEntry(se('d', { hosts: ['db.example'], resolution: 'DNS', endpoints: [{ address: '192.0.2.1' }] })), { value: null, problems: ['ServiceEntry istio/d: no address to answer with, skipped'] });
  t.same(trimServiceEntry(se('n', { hosts: ['db.example'], addresses: ['192.0.2.1'], resolution: 'NONE' })), { value: null, problems: ['ServiceEntry istio/n: resolution NONE, nothing to answer with'] });
  t.equal(trimServiceEntry({ metadata: { name: 'x' } }).value, null, 'no spec at all: skipped, no throw');
});

t.test('names: the exact host wins, else the nearest wildcard; a wildcard does not name its own suffix', async (t) => {
  const n = new ServiceEntryNames();
  n.set('a/wild', { namespace: 'a', name: 'wild', hosts: ['*.test.global'], addresses: ['127.255.0.2'] });
  n.set('a/deep', { namespace: 'a', name: 'deep', hosts: ['*.eu.test.global'], addresses: ['127.255.0.3'] });
  n.set('b/one', { namespace: 'b', name: 'one', hosts: ['special.test.global'], addresses: ['127.255.0.9'] });
  n.set('c/also', { namespace: 'c', name: 'also', hosts: ['special.test.global'], addresses: ['127.255.0.10', '127.255.0.9'] });
  t.same(n.lookup('service1.test.global'), ['127.255.0.2']);
  t.same(n.lookup('x.y.test.global'), ['127.255.0.2'], 'any depth below');
  t.same(n.lookup('db.eu.test.global'), ['127.255.0.3'], 'the nearer wildcard');
  t.same(n.lookup('special.test.global'), ['127.255.0.9', '127.255.0.10'], 'the exact host, every entry naming it');
  t.equal(n.lookup('test.global'), null);
  t.equal(n.lookup('other.global'), null);
  t.same(n.counts(), { entries: 4, hosts: 3 });
  n.set('b/one', null);
  n.set('c/also', null);
  t.same(n.lookup('special.test.global'), ['127.255.0.2'], 'gone: the wildcard again');
});
