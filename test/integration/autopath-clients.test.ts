// Real stub resolvers (glibc and musl getaddrinfo, Go's resolver) in pod-like network namespaces with
// the kubelet's resolv.conf, asking the DNS pod (dnscache --add-subnet=32,128 in front of kube-dns
// --autopath, a real dnsmasq as the world's DNS) in a namespace of its own. One client pod is in the
// cluster file, the other is not (today's behaviour, the baseline): the known pod sends one query per
// address family for every name that exists, the unknown one walks its search list, and both get the
// same addresses. Missing names still walk the whole list for both.

import t from 'tap';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import { startDnsPod } from '../helpers/autopath-pod.ts';
import type { Program } from '../helpers/process.ts';
import { buildResolvers, countedLookup } from '../helpers/resolvers.ts';

/** name → whether it exists, and how many queries the baseline walk costs for getaddrinfo-style A+AAAA lookups. */
const NAMES: readonly { name: string; what: string; exists: boolean }[] = [
  { name: 'web', what: 'in the namespace', exists: true },
  { name: 'legacy.apps', what: 'another namespace', exists: true },
  { name: 'api.example.com', what: 'outside', exists: true },
  { name: 'kubernetes.default.svc', what: 'partly qualified', exists: true },
  { name: 'nothing', what: 'missing', exists: false },
  { name: 'nothing.example.com', what: 'missing outside', exists: false },
];

/** Queries dnscache logged from `ip` so far. */
const queriesFrom = (cache: Program, ip: string) => (cache.output().match(new RegExp(`query .*client=${ip.replaceAll('.', '\\.')}$`, 'gm')) ?? []).length;

t.test('queries per lookup from real resolvers: one per address family for every name that exists', async (t) => {
  if (!netnsCanRun(t)) return;
  const resolvers = buildResolvers(t);
  const net = podNetwork(t, ['default', 'default']);
  const [known, unknown] = net.clients;
  const { cache } = await startDnsPod(t, net.dns, [known]);
  const table: string[] = ['resolver | name | queries with autopath | without | answer'];
  for (const [kind, binary] of resolvers) {
    for (const { name, what, exists } of NAMES) {
      const withIt = await countedLookup(known.netns, binary, name, () => queriesFrom(cache, known.ip));
      const without = await countedLookup(unknown.netns, binary, name, () => queriesFrom(cache, unknown.ip));
      table.push(`${kind} | ${name} (${what}) | ${withIt.queries} | ${without.queries} | ${withIt.result}`);
      t.equal(withIt.result, without.result, `${kind} ${name}: the same answer as without autopath`);
      if (exists) {
        t.not(withIt.result, 'not found', `${kind} ${name} resolves`);
        t.equal(withIt.queries, 2, `${kind} ${name} (${what}): one query per address family`);
      } else {
        t.equal(withIt.result, 'not found');
        t.equal(withIt.queries, without.queries, `${kind} ${name}: a missing name still walks the list`);
      }
    }
  }
  t.comment(table.join('\n'));
});
