// dnsmasq-nanny under dnsperf's load of 1,000 queries/s over 20 long-lived sockets while the ConfigMap
// gains upstreamNameservers: for dnscache a `no-resolv` line in the servers-file and a SIGHUP, never a
// restart, so no socket closes and nothing is lost. (Until this, it was a restart with the new child
// beside the old one on the port: 0-1 lost, a datagram dropped with the old socket's queue; earlier
// still, 23 in one of two runs.)

import t from 'tap';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dnsmasqReadableDir, startDnsmasq } from '../helpers/dnsmasq.ts';
import { startNanny } from '../helpers/nanny.ts';

const run = promisify(execFile);

t.test('upstreams appearing under 1,000 queries/s: the same dnscache, reloaded, and no query lost', async (t) => {
  const [u1, stub] = await Promise.all([startDnsmasq(t, ['192.0.2.1 www.example.com']), startDnsmasq(t, ['192.0.2.10 db.corp.test'])]);
  const n = await startNanny(t, { files: { stubDomains: JSON.stringify({ 'corp.test': [`127.0.0.1:${stub.port}`] }) } });
  const [child] = n.childPids();
  const dir = dnsmasqReadableDir('kdt-nanny-load-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'queries'), 'db.corp.test A\nwww.example.com A\n');
  const load = run('dnsperf', ['-s', '127.0.0.1', '-p', String(n.dnsPort), '-d', join(dir, 'queries'), '-l', '6', '-Q', '1000', '-c', '20', '-t', '2'], { timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 1500));
  n.writeConfig({ upstreamNameservers: JSON.stringify([`127.0.0.1:${u1.port}`]) });
  const { stdout } = await load;
  t.match(n.program.output(), /servers changed: servers-file rewritten, child reloaded \(SIGHUP\)/, 'the change was applied during the load');
  t.same(n.childPids(), [child], 'by the same child: no restart');
  t.equal(await n.metric('dnsmasq_nanny_child_restarts_total{reason="config"}'), 0);
  const sent = Number(/Queries sent:\s+(\d+)/.exec(stdout)?.[1]);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1]);
  t.ok(sent >= 5000, `dnsperf sent ${sent}`);
  t.equal(lost, 0, `${lost} of ${sent} lost`);
});
