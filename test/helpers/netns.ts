// Pod-like network namespaces for client-behaviour tests: one namespace for the DNS pod, and one per
// client pod joined to it by a veth pair (10.244.<100+i>.2 ↔ .1), each client with the kubelet's
// resolv.conf (`search <ns>.svc.cluster.local svc.cluster.local cluster.local`, `ndots:5`, the DNS
// pod's address as nameserver), which `ip netns exec` mounts over /etc/resolv.conf. Nothing leaves
// the namespaces the test made; teardown kills whatever runs in them and deletes them. Needs root.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';

export interface ClientPod {
  /** The network namespace's name (for `ip netns exec`). */
  netns: string;
  /** The pod's address, as the cluster file gives it. */
  ip: string;
  /** The DNS pod's address on this pod's link: the nameserver of its resolv.conf. */
  nameserver: string;
}

export interface PodNetwork {
  /** The DNS pod's network namespace. */
  dns: string;
  clients: ClientPod[];
  /** `ip netns exec <netns>`: prefix for a command run there. */
  exec(netns: string): string[];
}

/** Whether this process may create network namespaces; when not, `t` is skipped (CI runs as root). */
export function netnsCanRun(t: Test): boolean {
  if (process.getuid?.() === 0) return true;
  if (process.env.CI === 'true') t.fail('network namespace tests need root, and CI runs as root');
  else t.skip('SKIPPING: network namespace tests need root', () => {});
  return false;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

/** The DNS pod's namespace and one client namespace per entry of `namespaces` (its pod's Kubernetes namespace). */
export function podNetwork(t: Test, namespaces: string[]): PodNetwork {
  const id = randomBytes(3).toString('hex').slice(0, 5);
  const dns = `kdt-d${id}`;
  const made: string[] = [];
  t.teardown(() => {
    for (const ns of made) {
      try {
        for (const pid of ip('netns', 'pids', ns).toString().split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // already gone
          }
        }
        ip('netns', 'del', ns);
      } catch {
        // already deleted
      }
      rmSync(`/etc/netns/${ns}`, { recursive: true, force: true });
    }
  });
  const add = (ns: string) => {
    ip('netns', 'add', ns);
    made.push(ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  };
  add(dns);
  const clients = namespaces.map((podNamespace, i): ClientPod => {
    const netns = `kdt-p${id}${i}`;
    add(netns);
    const a = `kdv${id}${i}a`;
    const b = `kdv${id}${i}b`;
    ip('link', 'add', a, 'netns', dns, 'type', 'veth', 'peer', 'name', b, 'netns', netns);
    const nameserver = `10.244.${100 + i}.1`;
    const podIp = `10.244.${100 + i}.2`;
    ip('-n', dns, 'addr', 'add', `${nameserver}/24`, 'dev', a);
    ip('-n', dns, 'link', 'set', a, 'up');
    ip('-n', netns, 'addr', 'add', `${podIp}/24`, 'dev', b);
    ip('-n', netns, 'link', 'set', b, 'up');
    mkdirSync(`/etc/netns/${netns}`, { recursive: true });
    writeFileSync(`/etc/netns/${netns}/resolv.conf`, `search ${podNamespace}.svc.cluster.local svc.cluster.local cluster.local\nnameserver ${nameserver}\noptions ndots:5\n`);
    return { netns, ip: podIp, nameserver };
  });
  return { dns, clients, exec: (netns) => ['ip', 'netns', 'exec', netns] };
}
