// node-cache names each pod to kube-dns: a node (network namespace) runs node-cache on the addresses
// its pods ask (each pod a namespace of its own with the kubelet's resolv.conf), and the world's DNS (a
// real dnsmasq); kube-dns --autopath runs in a pod of its own behind a link, so node-cache's queries
// reach it from the node's address, as across a cluster. node-cache passes each pod's address in an
// EDNS Client Subnet to the cluster DNS Service alone; kube-dns trusts it from the nodes its Pod watch
// shows (status.hostIP), and answers a known pod's whole search walk at its first query. Queries per
// lookup from real stub resolvers (glibc, musl, Go), counted in node-cache's query log: one per
// address family for a known pod, the whole walk for a pod kube-dns does not know.

import t from 'tap';
import type { Test } from 'tap';
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DNSMASQ, dnsmasqHostsArgs, dnsmasqReadableDir } from '../helpers/dnsmasq.ts';
import { yamlDocs } from '../helpers/kubedns.ts';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import type { ClientPod } from '../helpers/netns.ts';
import { repoRoot, startCommand, startProgram } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';
import { buildResolvers, countedLookup } from '../helpers/resolvers.ts';

const NAMES: readonly { name: string; exists: boolean }[] = [
  { name: 'web', exists: true },
  { name: 'legacy.apps', exists: true },
  { name: 'api.example.com', exists: true },
  { name: 'nothing', exists: false },
];

/** The node: node-cache for the pods `clients`, kube-dns in the pod `kubeDnsPod`, which knows `known` (on the node's address). */
async function startNode(t: Test, node: string, clients: ClientPod[], kubeDnsPod: ClientPod, known: ClientPod): Promise<Program> {
  const dir = dnsmasqReadableDir('kdt-nodecache-asker-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The node's address on kube-dns's link: where node-cache's queries to kube-dns come from.
  const nodeIp = kubeDnsPod.nameserver;
  writeFileSync(join(dir, 'hosts'), '192.0.2.10 api.example.com\n');
  const world = startCommand(t, ['ip', 'netns', 'exec', node, DNSMASQ, ...dnsmasqHostsArgs(53, join(dir, 'hosts'), join(dir, 'dnsmasq.pid'), ['--local=/example.com/'], nodeIp)], {}, 'dnsmasq');
  await world.waitFor(/read .*hosts - 1 names/);
  const pod = `apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default, uid: uid-client}\nspec: {nodeName: node-1}\nstatus: {phase: Running, podIP: ${known.ip}, hostIP: ${nodeIp}}`;
  writeFileSync(join(dir, 'cluster.yaml'), yamlDocs(readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8'), pod));
  writeFileSync(join(dir, 'empty-resolv.conf'), '');
  const kd = startProgram(t, 'kube-dns', [`--cluster-file=${join(dir, 'cluster.yaml')}`, `--dns-bind-address=${kubeDnsPod.ip}`, '--dns-port=53', '--http-bind-address=127.0.0.1', '--healthz-port=0', `--resolv-conf=${join(dir, 'empty-resolv.conf')}`, `--nameservers=${nodeIp}:53`, '--autopath'], {}, ['ip', 'netns', 'exec', kubeDnsPod.netns]);
  await kd.waitFor(/initial sync done/);
  // The node-local Corefile's shape: the cluster's zones to the kube-dns Service, the rest to the node's resolv.conf.
  const bind = clients.map((c) => c.nameserver).join(' ');
  const zone = (z: string) => `${z}:53 {\n    log\n    cache {\n        success 9984 30\n        denial 9984 5\n    }\n    bind ${bind}\n    forward . __PILLAR__CLUSTER__DNS__ {\n        force_tcp\n    }\n}\n`;
  writeFileSync(join(dir, 'Corefile.base'), `${zone('cluster.local')}${zone('in-addr.arpa')}.:53 {\n    log\n    cache 30\n    bind ${bind}\n    forward . __PILLAR__UPSTREAM__SERVERS__\n}\n`);
  writeFileSync(join(dir, 'resolv.conf'), `nameserver ${nodeIp}\n`);
  mkdirSync(join(dir, 'kube-dns'));
  const nc = startProgram(
    t,
    'node-cache',
    [`-localip=${clients.map((c) => c.nameserver).join(',')}`, '-upstreamsvc', 'kube-dns-upstream', '-setupinterface=false', '-setupiptables=false', `-basecorefile=${join(dir, 'Corefile.base')}`, `-corefile=${join(dir, 'Corefile')}`, `-kubednscm=${join(dir, 'kube-dns')}`, `-resolvconf=${join(dir, 'resolv.conf')}`, '-metrics-listen-address=127.0.0.1:9353'],
    { KUBE_DNS_UPSTREAM_SERVICE_HOST: kubeDnsPod.ip },
    ['ip', 'netns', 'exec', node],
  );
  await nc.waitFor(/DNS listening/);
  return nc;
}

/** Queries node-cache logged from `ip` so far. */
const queriesFrom = (nc: Program, ip: string) => (nc.output().match(new RegExp(`^\\[INFO\\] ${ip.replaceAll('.', '\\.')}:\\d+ - `, 'gm')) ?? []).length;

t.test('through node-cache, a pod kube-dns knows is answered in one query per address family; the pod it does not know walks', async (t) => {
  if (!netnsCanRun(t)) return;
  const resolvers = buildResolvers(t);
  const net = podNetwork(t, ['default', 'default', 'kube-system']);
  const [known, unknown, kubeDnsPod] = net.clients;
  const nc = await startNode(t, net.dns, [known, unknown], kubeDnsPod, known);
  const table: string[] = ['resolver | name | queries, known pod | unknown pod | answer'];
  for (const [kind, binary] of resolvers) {
    for (const { name, exists } of NAMES) {
      const withIt = await countedLookup(known.netns, binary, name, () => queriesFrom(nc, known.ip));
      const without = await countedLookup(unknown.netns, binary, name, () => queriesFrom(nc, unknown.ip));
      table.push(`${kind} | ${name} | ${withIt.queries} | ${without.queries} | ${withIt.result}`);
      t.equal(withIt.result, without.result, `${kind} ${name}: the same answer for both`);
      if (exists) {
        t.not(withIt.result, 'not found', `${kind} ${name} resolves`);
        t.equal(withIt.queries, 2, `${kind} ${name}: one query per address family`);
        if (name !== 'web') t.ok(without.queries > 2, `${kind} ${name}: the unknown pod walks its search list (${without.queries} queries)`);
      } else {
        t.equal(withIt.queries, without.queries, `${kind} ${name}: a missing name still walks the list`);
      }
    }
  }
  t.comment(table.join('\n'));
});
