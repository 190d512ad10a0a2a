// dnsmasq-nanny's restart of dnscache for a new command line (upstreamNameservers appearing adds
// --no-resolv) under dnsperf's load of 1,000 queries/s over 20 long-lived sockets: no query lost,
// because the new child serves on the very socket the old one had (the nanny holds it and hands it
// over: node:cluster); before, each child bound its own and the old one's queue died with it.

import t from 'tap';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dnsmasqReadableDir, startDnsmasq } from '../helpers/dnsmasq.ts';
import { startNanny } from '../helpers/nanny.ts';

const run = promisify(execFile);

/** The inodes of the UDP sockets bound to `port` (/proc/net/udp: local address, then the inode tenth) that `pid` holds. */
function udpSocketsOn(port: number, pid: number): string[] {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const bound = readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f[1]?.endsWith(local)).map((f) => f[9]);
  const held = new Set(readdirSync(`/proc/${pid}/fd`).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' })));
  return bound.filter((inode) => held.has(`socket:[${inode}]`));
}

t.test('a restart for a new command line under 1,000 queries/s loses nothing', async (t) => {
  const [u1, stub] = await Promise.all([startDnsmasq(t, ['192.0.2.1 www.example.com']), startDnsmasq(t, ['192.0.2.10 db.corp.test'])]);
  const n = await startNanny(t, { files: { stubDomains: JSON.stringify({ 'corp.test': [`127.0.0.1:${stub.port}`] }) } });
  const dir = dnsmasqReadableDir('kdt-nanny-load-');
  writeFileSync(join(dir, 'queries'), 'db.corp.test A\n');
  const load = run('dnsperf', ['-s', '127.0.0.1', '-p', String(n.dnsPort), '-d', join(dir, 'queries'), '-l', '6', '-Q', '1000', '-c', '20', '-t', '2'], { timeout: 30_000 });
  const [first] = n.childPids();
  const before = udpSocketsOn(n.dnsPort, first);
  t.equal(before.length, 1, 'the child holds one UDP socket on the port');
  await new Promise((r) => setTimeout(r, 1500));
  n.writeConfig({ upstreamNameservers: JSON.stringify([`127.0.0.1:${u1.port}`]) });
  const { stdout } = await load;
  t.match(n.program.output(), /command line changed: restarting the child/, 'the child was restarted during the load');
  const second = n.childPids()[1];
  t.same(udpSocketsOn(n.dnsPort, second), before, 'the new child serves on the very socket the old one had: the restart closed none');
  const sent = Number(/Queries sent:\s+(\d+)/.exec(stdout)?.[1]);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1]);
  t.ok(sent >= 5000, `dnsperf sent ${sent}`);
  t.equal(lost, 0, `no query lost (${lost} of ${sent})`);
});
