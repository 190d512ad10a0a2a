// Real stub resolvers (glibc and musl getaddrinfo, Go's resolver) in pod-like network namespaces with
// the kubelet's resolv.conf, asking the DNS pod (dnscache --add-subnet=32,128 in front of kube-dns
// --autopath, a real dnsmasq as the world's DNS) in a namespace of its own. One client pod is in the
// cluster file, the other is not (today's behaviour, the baseline): the known pod sends one query per
// address family for every name that exists, the unknown one walks its search list, and both get the
// same addresses. Missing names still walk the whole list for both.

import t from 'tap';
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DNSMASQ } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { yamlDocs } from '../helpers/kubedns.ts';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import type { ClientPod } from '../helpers/netns.ts';
import { repoRoot, startCommand, startProgram } from '../helpers/process.ts';
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

interface DnsPod {
  cache: Program;
}

async function startDnsPod(t: Test, netns: string, known: ClientPod): Promise<DnsPod> {
  const exec = ['ip', 'netns', 'exec', netns];
  // Files a dnsmasq that drops to nobody can read: a 0755 directory of 0644 files.
  const dir = mkdtempSync(join(tmpdir(), 'kdt-autopath-clients-'));
  chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'hosts'), '192.0.2.10 api.example.com\n');
  chmodSync(join(dir, 'hosts'), 0o644);
  const world = startCommand(t, [...exec, DNSMASQ, '-k', '--conf-file=/dev/null', '--port=5353', '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--no-hosts', `--addn-hosts=${join(dir, 'hosts')}`, '--local=/example.com/', '--local-ttl=60', `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--log-facility=-'], {}, 'dnsmasq');
  await world.waitFor(/read .*hosts - 1 names/);
  const cluster = join(dir, 'cluster.yaml');
  const pod = `apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default, uid: uid-client}\nspec: {}\nstatus: {phase: Running, podIP: ${known.ip}}`;
  writeFileSync(cluster, yamlDocs(readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8'), pod));
  writeFileSync(join(dir, 'resolv.conf'), '');
  const kd = startProgram(t, 'kube-dns', [`--cluster-file=${cluster}`, '--dns-bind-address=127.0.0.1', '--dns-port=10053', '--http-bind-address=127.0.0.1', '--healthz-port=0', `--resolv-conf=${join(dir, 'resolv.conf')}`, '--nameservers=127.0.0.1:5353', '--autopath'], {}, exec);
  await kd.waitFor(/initial sync done/);
  // The manifest's dnscache arguments, on the pod's addresses, with the asker's address for kube-dns.
  const cache = startProgram(t, 'dnscache', ['-k', '--port=53', '--cache-size=1000', '--no-negcache', '--no-resolv', '--server=/cluster.local/127.0.0.1#10053', '--server=/in-addr.arpa/127.0.0.1#10053', '--server=127.0.0.1#5353', '--add-subnet=32,128', '--log-queries', '--log-facility=-'], {}, exec);
  await cache.waitFor(/"?listening/);
  return { cache };
}

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
  const { cache } = await startDnsPod(t, net.dns, known);
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
