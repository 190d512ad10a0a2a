// The DNS pod for client-behaviour tests and benchmarks, run in a network namespace of the test's
// (test/helpers/netns.ts): the manifest's dnscache in front of kube-dns --autopath, and a real dnsmasq
// standing in for the world's DNS.

import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { DNSMASQ } from './dnsmasq.ts';
import { yamlDocs } from './kubedns.ts';
import type { ClientPod } from './netns.ts';
import { repoRoot, startCommand, startProgram } from './process.ts';
import type { Program } from './process.ts';

export interface DnsPod {
  /** dnscache (with `logQueries`, logging every query with the asker's address). */
  cache: Program;
}

/**
 * In network namespace `netns`: the world's DNS (a real dnsmasq: api.example.com, NXDOMAIN for other
 * example.com names, 192.0.2.20 for every name under bench.test), kube-dns --autopath with the example
 * cluster plus the `known` pods (namespace default), and dnscache --add-subnet=32,128 on port 53.
 */
export async function startDnsPod(t: Test, netns: string, known: ClientPod[], o: { logQueries: boolean } = { logQueries: true }): Promise<DnsPod> {
  const exec = ['ip', 'netns', 'exec', netns];
  // Files a dnsmasq that drops to nobody can read: a 0755 directory of 0644 files.
  const dir = mkdtempSync(join(tmpdir(), 'kdt-autopath-clients-'));
  chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'hosts'), '192.0.2.10 api.example.com\n');
  chmodSync(join(dir, 'hosts'), 0o644);
  const world = startCommand(t, [...exec, DNSMASQ, '-k', '--conf-file=/dev/null', '--port=5353', '--listen-address=127.0.0.1', '--bind-interfaces', '--no-resolv', '--no-hosts', `--addn-hosts=${join(dir, 'hosts')}`, '--local=/example.com/', '--address=/bench.test/192.0.2.20', '--local-ttl=60', `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--log-facility=-'], {}, 'dnsmasq');
  await world.waitFor(/read .*hosts - 1 names/);
  const cluster = join(dir, 'cluster.yaml');
  const pods = known.map((p, i) => `apiVersion: v1\nkind: Pod\nmetadata: {name: client-${i}, namespace: default, uid: uid-client-${i}}\nspec: {}\nstatus: {phase: Running, podIP: ${p.ip}}`);
  writeFileSync(cluster, yamlDocs(readFileSync(join(repoRoot, 'examples/cluster.yaml'), 'utf8'), ...pods));
  writeFileSync(join(dir, 'resolv.conf'), '');
  const kd = startProgram(t, 'kube-dns', [`--cluster-file=${cluster}`, '--dns-bind-address=127.0.0.1', '--dns-port=10053', '--http-bind-address=127.0.0.1', '--healthz-port=0', `--resolv-conf=${join(dir, 'resolv.conf')}`, '--nameservers=127.0.0.1:5353', '--autopath'], {}, exec);
  await kd.waitFor(/initial sync done/);
  // The manifest's dnscache arguments, on the pod's addresses, with the asker's address for kube-dns.
  const cache = startProgram(t, 'dnscache', ['-k', '--port=53', '--cache-size=1000', '--no-negcache', '--no-resolv', '--server=/cluster.local/127.0.0.1#10053', '--server=/in-addr.arpa/127.0.0.1#10053', '--server=127.0.0.1#5353', '--add-subnet=32,128', ...(o.logQueries ? ['--log-queries'] : []), '--log-facility=-'], {}, exec);
  await cache.waitFor(/listening/);
  return { cache };
}

