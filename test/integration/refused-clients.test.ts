// What a pod's resolver does with REFUSED: the answer kube-dns gives a pod behind our caches whose misses
// are over its fair share while kube-dns is busy (README, Reliability: "One asker cannot take the
// thread from the others"), which node-cache relays to the pod. Real stub resolvers (glibc and musl
// getaddrinfo, Go's resolver) in a pod-like namespace with the kubelet's resolv.conf ask a server that
// refuses every query: a test double, as kube-dns refuses only under CPU contention, which a test cannot
// make on demand. Every lookup fails as a temporary failure (never "no such name": the application tries
// again later); how it gets there differs, and the README says so: glibc asks the first name of its
// search list and the bare name (each twice) and ends at once; musl takes no REFUSED for an answer and
// waits out its timeout, as for a query never answered, asking the first name only; Go walks its
// whole list at once.

import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { netnsCanRun, podNetwork } from '../helpers/netns.ts';
import { buildResolvers } from '../helpers/resolvers.ts';

const run = promisify(execFile);

/** Answers every UDP query on `address`:53 REFUSED (the question kept), printing `q <name> <type>` for each. */
const REFUSER = `
const s = require('node:dgram').createSocket('udp4');
s.on('message', (m, r) => {
  let p = 12, name = [];
  while (m[p] !== 0) { name.push(m.subarray(p + 1, p + 1 + m[p]).toString()); p += m[p] + 1; }
  const end = p + 5;
  const a = Buffer.from(m.subarray(0, end));
  a[2] = 0x80 | (m[2] & 0x01); a[3] = 0x80 | 5; a.writeUInt16BE(0, 6); a.writeUInt16BE(0, 8); a.writeUInt16BE(0, 10);
  process.stdout.write('q ' + name.join('.') + ' ' + m.readUInt16BE(p + 1) + '\\n');
  s.send(a, r.port, r.address);
});
s.bind(53, process.argv[1], () => process.stdout.write('listening\\n'));
`;

/** The names each resolver asks before it gives up on a refused `web` (the pod in namespace default). */
const ASKED: Record<string, string[]> = {
  glibc: ['web.default.svc.cluster.local', 'web'],
  musl: ['web.default.svc.cluster.local'],
  go: ['web.default.svc.cluster.local', 'web.svc.cluster.local', 'web.cluster.local', 'web'],
};

t.test('REFUSED fails a lookup as a temporary failure, for glibc, musl and Go', async (t) => {
  if (!netnsCanRun(t)) return;
  const resolvers = buildResolvers(t);
  const net = podNetwork(t, ['default']);
  const [pod] = net.clients;
  const refuser = spawn('ip', ['netns', 'exec', net.dns, process.execPath, '-e', REFUSER, pod.nameserver], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => refuser.kill('SIGKILL'));
  let log = '';
  refuser.stdout.on('data', (d: Buffer) => (log += d.toString()));
  await new Promise<void>((resolve) => refuser.stdout.on('data', () => log.includes('listening') && resolve()));

  const table = ['resolver | queries asked | error | ms'];
  for (const [kind, binary] of resolvers) {
    const from = log.length;
    const t0 = performance.now();
    const r = await run('ip', ['netns', 'exec', pod.netns, binary, 'web'], { timeout: 30_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const ms = performance.now() - t0;
    const asked = log.slice(from).split('\n').filter((l) => l.startsWith('q '));
    const names = [...new Set(asked.map((l) => l.split(' ')[1]))];
    table.push(`${kind} | ${asked.length}: ${asked.map((l) => l.slice(2)).join(', ')} | ${r.stdout.trim()} | ${ms.toFixed(0)}`);
    t.match(r.stdout, /^web: (Temporary failure in name resolution|Try again|lookup web on .*: server misbehaving)$/m, `${kind}: a temporary failure, not "no such name"`);
    t.same(names, ASKED[kind], `${kind}: the names asked`);
  }
  t.comment(table.join('\n'));
});
