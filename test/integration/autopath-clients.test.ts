// Real stub resolvers (glibc and musl getaddrinfo, Go's resolver) in pod-like network namespaces with
// the kubelet's resolv.conf, asking the DNS pod (dnscache --add-subnet=32,128 in front of kube-dns
// --autopath, a real dnsmasq as the world's DNS) in a namespace of its own. One client pod is in the
// cluster file, the other is not (today's behaviour, the baseline): the known pod sends one query per
// address family for every name that exists, the unknown one walks its search list, and both get the
// same addresses. Missing names still walk the whole list for both.

import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eventually } from '../helpers/eventually.ts';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import type { ClientPod } from '../helpers/netns.ts';
import { startDnsPod } from '../helpers/autopath-pod.ts';
import type { Program } from '../helpers/process.ts';
import { buildResolvers } from '../helpers/resolvers.ts';

const run = promisify(execFile);

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

/** One lookup: its sorted addresses (or the failure) and the queries it sent. */
async function lookup(cache: Program, client: ClientPod, binary: string, name: string): Promise<{ result: string; queries: number }> {
  const before = queriesFrom(cache, client.ip);
  const r = await run('ip', ['netns', 'exec', client.netns, binary, name], { timeout: 30_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const lines = r.stdout.trim().split('\n');
  const result = lines.some((l) => l.includes(': ')) ? 'not found' : [...new Set(lines.map((l) => l.split(' ')[1]))].sort().join(',');
  // Every query was logged before its answer left; the pipe may still hold the last lines.
  let queries = 0;
  await eventually(async () => {
    const n = queriesFrom(cache, client.ip) - before;
    const stable = n === queries && n > 0;
    queries = n;
    if (!stable) await new Promise((resolve) => setTimeout(resolve, 100));
    return stable;
  }, `the queries of ${name} logged`, 5000);
  return { result, queries };
}

t.test('queries per lookup from real resolvers: one per address family for every name that exists', async (t) => {
  if (!netnsCanRun(t)) return;
  const resolvers = buildResolvers(t);
  const net = podNetwork(t, ['default', 'default']);
  const [known, unknown] = net.clients;
  const { cache } = await startDnsPod(t, net.dns, [known]);
  const table: string[] = ['resolver | name | queries with autopath | without | answer'];
  for (const [kind, binary] of resolvers) {
    for (const { name, what, exists } of NAMES) {
      const withIt = await lookup(cache, known, binary, name);
      const without = await lookup(cache, unknown, binary, name);
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
