// kube-dns configuration as operators change it: --ttl, --pod-records, the ConfigMap by name
// (--config-map) and by directory (--config-dir) with an invalid update, and hostile packets
// thrown at the running binary.

import t from 'tap';
import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { dig, answers } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { startKubeDns, yamlDocs, service, endpointSlice } from '../helpers/kubedns.ts';
import { eventually } from '../helpers/eventually.ts';

const web = service('default', 'web', 'clusterIP: 10.96.0.5');

async function metrics(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

t.test('--ttl sets every record TTL; --pod-records=disabled removes pod names', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(web), args: ['--ttl=7', '--pod-records=disabled'] });
  const a = await dig(kd.dnsPort, 'web.default.svc.cluster.local');
  t.equal(a.answer[0]?.ttl, 7);
  const nx = await dig(kd.dnsPort, 'nothere.default.svc.cluster.local');
  t.equal(nx.authority[0]?.data.split(' ').at(-1), '7', 'SOA minimum (negative TTL) follows --ttl');
  t.equal((await dig(kd.dnsPort, '10-1-2-3.default.pod.cluster.local')).status, 'NXDOMAIN');
});

t.test('--config-map takes upstreams from that ConfigMap only, and follows its changes', async (t) => {
  const first = await startDnsmasq(t, ['192.0.2.1 www.example.com']);
  const second = await startDnsmasq(t, ['192.0.2.2 www.example.com']);
  const cm = (name: string, port: number) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: kube-system
data:
  upstreamNameservers: '["127.0.0.1:${port}"]'`;
  // Another ConfigMap in the namespace must not be taken as the config (the original's bug).
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(web, cm('kube-dns', first.port), cm('unrelated', second.port)), args: ['--config-map=kube-dns'] });
  t.same(answers(await eventually(async () => {
    const r = await dig(kd.dnsPort, 'www.example.com');
    return r.answer.length > 0 && r;
  }, 'an answer from the configured upstream')), ['192.0.2.1']);
  writeFileSync(kd.clusterFile, yamlDocs(web, cm('kube-dns', second.port), cm('unrelated', first.port)));
  t.same(answers(await eventually(async () => {
    const r = await dig(kd.dnsPort, 'www.example.com');
    return answers(r)[0] === '192.0.2.2' && r;
  }, 'the new upstream')), ['192.0.2.2']);
});

t.test('--config-dir: an invalid update is logged, counted and ignored', async (t) => {
  const upstream = await startDnsmasq(t, ['192.0.2.9 www.example.com']);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-config-'));
  writeFileSync(join(dir, 'upstreamNameservers'), JSON.stringify([`127.0.0.1:${upstream.port}`]));
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(web), args: [`--config-dir=${dir}`, '--config-period=200ms'] });
  t.same(answers(await dig(kd.dnsPort, 'www.example.com')), ['192.0.2.9']);
  writeFileSync(join(dir, 'upstreamNameservers'), '["not-an-ip", "1.2.3.4", "5.6.7.8", "9.9.9.9"]');
  await kd.program.waitFor(/invalid configuration, ignoring update.*upstreamNameservers/);
  await eventually(async () => /kubedns_config_invalid_updates_total 1/.test(await metrics(kd.httpPort)), 'the invalid update counted');
  t.same(answers(await dig(kd.dnsPort, 'www.example.com')), ['192.0.2.9'], 'the last good upstreams keep serving');
});

t.test('--config-dir with nothing mounted (the manifest mounts it optional): --nameservers still forward', async (t) => {
  const up = await startDnsmasq(t, ['192.0.2.9 www.example.com']);
  const empty = mkdtempSync(join(tmpdir(), 'kdt-empty-config-'));
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(web), args: [`--config-dir=${empty}`, `--nameservers=127.0.0.1:${up.port}`] });
  t.same(answers(await dig(kd.dnsPort, 'www.example.com')), ['192.0.2.9']);
  t.match(kd.program.output(), /configuration loaded from="--config-dir /);
});

t.test('round robin: a headless service\'s addresses start one further on per reply, from the cache too; --round-robin=false keeps their order', async (t) => {
  const cluster = yamlDocs(
    service('default', 'pool', 'clusterIP: None'),
    endpointSlice('default', 'pool', 'pool-1', 'IPv4', 'endpoints:\n- {addresses: [10.2.0.1]}\n- {addresses: [10.2.0.2]}\n- {addresses: [10.2.0.3]}'),
  );
  const orders = async (port: number) => {
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push((await dig(port, 'pool.default.svc.cluster.local')).answer.map((a) => a.data).join(','));
    return seen;
  };
  const rr = await orders((await startKubeDns(t, { clusterYaml: cluster })).dnsPort);
  t.same(new Set(rr.map((o) => o.split(',').sort().join(','))), new Set(['10.2.0.1,10.2.0.2,10.2.0.3']), 'every reply has every address');
  t.equal(new Set(rr.map((o) => o.split(',')[0])).size, 3, `each address comes first in turn (${rr.join(' | ')})`);
  const fixed = await orders((await startKubeDns(t, { clusterYaml: cluster, args: ['--round-robin=false'] })).dnsPort);
  t.equal(new Set(fixed).size, 1, 'one order with --round-robin=false');
});

t.test('--service-entries: the hosts of ServiceEntries in the cluster file answer; Services win; other types NODATA; edits followed', async (t) => {
  const entry = (addresses: string) => `apiVersion: networking.istio.io/v1alpha3
kind: ServiceEntry
metadata:
  name: external-svc-serviceentry
spec:
  hosts: ['*.test.global', 'web.default.svc.cluster.local', 'ghost.default.svc.cluster.local']
  addresses: [${addresses}]
  ports: [{number: 8080, name: http1, protocol: HTTP}]
  location: MESH_INTERNAL
  resolution: DNS
  endpoints: [{address: 47.111.38.80, ports: {http1: 15443}}]`;
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(web, entry('127.255.0.2')), args: ['--service-entries'] });
  for (const name of ['service1.test.global', 'service2.test.global']) t.same(answers(await dig(kd.dnsPort, name)), ['127.255.0.2'], name);
  const aaaa = await dig(kd.dnsPort, 'service1.test.global', 'AAAA');
  t.same([aaaa.status, aaaa.answer.length], ['NOERROR', 0], 'AAAA of a name that exists: NODATA');
  t.same((await dig(kd.dnsPort, 'test.global', 'A', ['+time=1', '+tries=1']).catch(() => ({ answer: [] }))).answer, [], 'the wildcard does not name its suffix');
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.5'], 'a Service wins over a ServiceEntry');
  t.same(answers(await dig(kd.dnsPort, 'ghost.default.svc.cluster.local')), ['127.255.0.2'], 'a cluster name no Service holds');
  t.match(await metrics(kd.httpPort), /^kubedns_service_entries\{kind="entries"\} 1$/m);
  writeFileSync(kd.clusterFile, yamlDocs(web, entry('127.255.0.7')));
  await eventually(async () => answers(await dig(kd.dnsPort, 'service1.test.global')).join() === '127.255.0.7', 'the edit, served (the cached answer dropped)', 3000);
  // The ServiceEntry's answer for the cluster name was cached; a Service created under that name wins at once.
  t.same(answers(await dig(kd.dnsPort, 'ghost.default.svc.cluster.local')), ['127.255.0.7']);
  writeFileSync(kd.clusterFile, yamlDocs(web, entry('127.255.0.7'), service('default', 'ghost', 'clusterIP: 10.96.0.77')));
  await eventually(async () => answers(await dig(kd.dnsPort, 'ghost.default.svc.cluster.local')).join() === '10.96.0.77', 'the new Service, not the cached ServiceEntry answer', 3000);
  const off = await startKubeDns(t, { clusterYaml: yamlDocs(web, entry('127.255.0.2')) });
  t.not(answers(await dig(off.dnsPort, 'service1.test.global', 'A', ['+time=1', '+tries=1'])).join(), '127.255.0.2', 'off by default');
});

t.test('hostile packets at the running binary: counted, and answers keep coming', async (t) => {
  const kd = await startKubeDns(t, { clusterYaml: yamlDocs(web) });
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  const send = (b: Buffer) => new Promise<void>((resolve) => sock.send(b, kd.dnsPort, '127.0.0.1', () => resolve()));
  // A question whose name is a compression pointer to itself.
  const loop = Buffer.from('abcd01000001000000000000c00c00010001', 'hex');
  for (let i = 0; i < 3000; i++) {
    const kind = i % 4;
    if (kind === 0) await send(randomBytes(1 + (i % 600)));
    else if (kind === 1) await send(randomBytes(5)); // shorter than a header
    else if (kind === 2) await send(loop);
    else await send(Buffer.concat([Buffer.from('abcd0100000500000000000003', 'hex'), randomBytes(40)])); // wrong counts
  }
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local')), ['10.96.0.5'], 'UDP still answers');
  t.same(answers(await dig(kd.dnsPort, 'web.default.svc.cluster.local', 'A', ['+tcp'])), ['10.96.0.5'], 'TCP still answers');
  const m = await eventually(async () => {
    const text = await metrics(kd.httpPort);
    const total = [...text.matchAll(/kubedns_dns_malformed_requests_total\{reason="[^"]+"\} (\d+)/g)].reduce((n, x) => n + Number(x[1]), 0);
    return total >= 1500 && text;
  }, 'malformed packets counted');
  t.match(m, /kubedns_dns_malformed_requests_total\{reason="short"\}/);
});
