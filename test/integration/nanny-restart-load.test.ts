// dnsmasq-nanny's restart of dnscache for a new command line (upstreamNameservers appearing adds
// --no-resolv) under dnsperf's load of 1,000 queries/s over 20 long-lived sockets: the new dnscache
// beside the old one on the port (SO_REUSEPORT), the old one drained. At most one query lost: when the
// old socket closes, the kernel drops what waits in its queue (0 or 1 in runs here; pkg/nanny README).

import t from 'tap';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dnsmasqReadableDir, startDnsmasq } from '../helpers/dnsmasq.ts';
import { startNanny } from '../helpers/nanny.ts';

const run = promisify(execFile);

t.test('a restart for a new command line under 1,000 queries/s loses at most one query', async (t) => {
  const [u1, stub] = await Promise.all([startDnsmasq(t, ['192.0.2.1 www.example.com']), startDnsmasq(t, ['192.0.2.10 db.corp.test'])]);
  const n = await startNanny(t, { files: { stubDomains: JSON.stringify({ 'corp.test': [`127.0.0.1:${stub.port}`] }) } });
  const dir = dnsmasqReadableDir('kdt-nanny-load-');
  writeFileSync(join(dir, 'queries'), 'db.corp.test A\n');
  const load = run('dnsperf', ['-s', '127.0.0.1', '-p', String(n.dnsPort), '-d', join(dir, 'queries'), '-l', '6', '-Q', '1000', '-c', '20', '-t', '2'], { timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 1500));
  n.writeConfig({ upstreamNameservers: JSON.stringify([`127.0.0.1:${u1.port}`]) });
  const { stdout } = await load;
  t.match(n.program.output(), /command line changed: restarting the child/, 'the child was restarted during the load');
  const sent = Number(/Queries sent:\s+(\d+)/.exec(stdout)?.[1]);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1]);
  t.ok(sent >= 5000, `dnsperf sent ${sent}`);
  t.ok(lost <= 1, `${lost} of ${sent} lost, at most 1`);
});
