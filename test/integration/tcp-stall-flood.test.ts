// 1,500 TCP connections that stall (half a frame, or a length prefix promising 65,535 bytes and then
// nothing) against kube-dns and dnscache with their default limits (1,000 connections): a new client
// must still be answered within 2 s (CoreDNS keeps answering; the original and dnsmasq do not), and
// the server says why it closed what it closed. UDP is untouched by any of it.

import t from 'tap';
import type { Test } from 'tap';
import { performance } from 'node:perf_hooks';
import { dig } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { startKubeDns, yamlDocs, service } from '../helpers/kubedns.ts';
import { eventually } from '../helpers/eventually.ts';
import { startProgram } from '../helpers/process.ts';
import type { Program } from '../helpers/process.ts';
import { scrape, sample } from '../helpers/sidecar.ts';
import { stallFlood } from '../helpers/stall.ts';

const STALLED = 1500;

async function flood(t: Test, port: number): Promise<void> {
  const f = await stallFlood(port, STALLED);
  t.teardown(() => f.close());
}

/** dig over TCP with one 2 s try; how long it took, and what it got. */
async function tcpAnswer(port: number, name: string): Promise<{ ms: number; status: string; answers: number }> {
  const started = performance.now();
  try {
    const r = await dig(port, name, 'A', ['+tcp', '+time=2', '+tries=1']);
    return { ms: performance.now() - started, status: r.status, answers: r.answer.length };
  } catch {
    return { ms: performance.now() - started, status: 'no answer', answers: 0 };
  }
}

const cluster = yamlDocs(service('default', 'kubernetes', 'clusterIP: 10.96.0.1\nclusterIPs: [10.96.0.1]'));

t.test('kube-dns answers a new TCP client during a stalled-connection flood', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: cluster });
  await flood(t, kd.dnsPort);
  for (let i = 0; i < 3; i++) {
    const r = await tcpAnswer(kd.dnsPort, 'kubernetes.default.svc.cluster.local');
    t.equal(r.status, 'NOERROR', `TCP client ${i + 1} answered`);
    t.ok(r.ms < 2000, `within 2 s (${r.ms.toFixed(0)} ms)`);
  }
  t.same((await dig(kd.dnsPort, 'kubernetes.default.svc.cluster.local')).answer.map((a) => a.data), ['10.96.0.1'], 'UDP unaffected');
  const m = await scrape(kd.httpPort);
  t.ok(sample(m, 'kubedns_dns_tcp_connections_closed_total{reason="evicted"}') >= STALLED - 1000, 'stalled connections made room, counted');
});

t.test('dnscache answers a new TCP client during a stalled-connection flood', async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.53 www.example.com'], ['--local-ttl=60']);
  const p = startProgram(t, 'dnscache', ['-k', '--port=0', '--listen-address=127.0.0.1', '--no-resolv', '--log-facility=-', `--server=127.0.0.1#${up.port}`]);
  const port = Number((await p.waitFor(/listening address=127\.0\.0\.1 port=(\d+)/))[1]);
  await flood(t, port);
  for (let i = 0; i < 3; i++) {
    const r = await tcpAnswer(port, 'www.example.com');
    t.equal(r.status, 'NOERROR', `TCP client ${i + 1} answered`);
    t.ok(r.ms < 2000, `within 2 s (${r.ms.toFixed(0)} ms)`);
  }
  const first = await statistics(p);
  t.ok(first.tcpEvicted >= STALLED - 1000, `stalled connections made room, counted (${first.tcpEvicted})`);
  // The frame deadline closes the rest of the flood within a few seconds.
  await new Promise((r) => setTimeout(r, 2500));
  const later = await statistics(p);
  t.ok(later.tcpStalled > 0, `stalled frames closed at their deadline (${later.tcpStalled})`);
});

/** SIGUSR1 to dnscache; the TCP counters of the statistics line it logs in reply. */
async function statistics(p: Program): Promise<{ tcpEvicted: number; tcpStalled: number }> {
  const lines = () => [...p.output().matchAll(/ statistics .*tcpStalled=(\d+) tcpEvicted=(\d+)/g)];
  const before = lines().length;
  p.child.kill('SIGUSR1');
  await eventually(() => lines().length > before, 'a statistics line', 3000);
  const last = lines().at(-1)!;
  return { tcpStalled: Number(last[1]), tcpEvicted: Number(last[2]) };
}
