// The forwarder against a real dnsmasq (/usr/sbin/dnsmasq) on 127.0.0.1: plain answers, a REFUSED
// failover, and an answer too big for 512-byte UDP fetched over TCP.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { Forwarder } from '../../pkg/forward/forward.ts';
import { answering, makeQuery, readAnswer } from './forward-fixtures.ts';

const DNSMASQ = '/usr/sbin/dnsmasq';
const big = Array.from({ length: 60 }, (_, i) => `10.1.0.${i + 1}`);

async function freePort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', () => resolve()));
  const { port } = s.address();
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Starts dnsmasq serving example.test and a hosts file; resolves once it has read the hosts file. */
async function startDnsmasq(t: Test): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'dnsmasq-'));
  chmodSync(dir, 0o755); // dnsmasq started as root reads its hosts file after dropping to nobody
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, big.map((ip) => `${ip} big.hosts.test\n`).join(''));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(
      DNSMASQ,
      [
        '-k',
        `--port=${port}`,
        '--listen-address=127.0.0.1',
        '--bind-interfaces',
        '--no-resolv',
        '--no-hosts',
        `--addn-hosts=${hosts}`,
        '--conf-file=/dev/null',
        '--pid-file=',
        '--log-facility=-',
        '--address=/example.test/192.0.2.7',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    });
    let log = '';
    const guard = setTimeout(() => child.kill('SIGTERM'), 10_000); // never wait forever for the log line
    const started = await new Promise<boolean>((resolve) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (/read .*hosts - \d+ names/.test(log)) resolve(true); // logged after "started"
        if (/failed to load names/.test(log)) child.kill('SIGTERM');
      });
      void exited.then(() => resolve(false));
    });
    clearTimeout(guard);
    if (started) return port;
    if (attempt >= 5 || !/in use/.test(log)) throw new Error(`dnsmasq did not start: ${log}`);
  }
}

t.test('against dnsmasq', { skip: existsSync(DNSMASQ) ? false : `${DNSMASQ} is not installed` }, async (t) => {
  const port = await startDnsmasq(t);
  const dnsmasq = { host: '127.0.0.1', port };
  const f = new Forwarder({ timeoutMs: 2000 });
  t.teardown(() => f.close());

  t.test('an answer', async (t) => {
    f.setUpstreams([dnsmasq]);
    const reply = readAnswer(await f.forward(makeQuery('www.example.test', 0x0a0b), 'www.example.test'));
    t.equal(reply.id, 0x0a0b);
    t.equal(reply.rcode, 0);
    t.same(reply.addresses, ['192.0.2.7']);
  });

  t.test('REFUSED (no data, no upstream): the next server answers; alone, REFUSED comes back', async (t) => {
    const other = await answering(t, { addresses: ['192.0.2.8'] });
    f.setUpstreams([dnsmasq, other]);
    t.same(readAnswer(await f.forward(makeQuery('www.elsewhere.test', 1), 'www.elsewhere.test')).addresses, ['192.0.2.8']);
    f.setUpstreams([dnsmasq]);
    const reply = readAnswer(await f.forward(makeQuery('www.elsewhere.test', 2), 'www.elsewhere.test'));
    t.equal(reply.rcode, 5);
    t.equal(reply.id, 2);
  });

  t.test('60 A records: truncated over UDP, complete over TCP', async (t) => {
    f.setUpstreams([dnsmasq]);
    const before = f.stats.tcpRetries;
    const reply = readAnswer(await f.forward(makeQuery('big.hosts.test', 3), 'big.hosts.test'));
    t.equal(reply.tc, false);
    t.same([...reply.addresses].sort(), [...big].sort());
    t.equal(f.stats.tcpRetries, before + 1);
  });
});
