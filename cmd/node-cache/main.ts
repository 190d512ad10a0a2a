#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// node-cache: flags → pkg/nodecache. Nothing else lives here.

const { rmSync, writeFileSync } = process.getBuiltinModule('node:fs');
import { resolve } from 'node:path';
import { fairShareSettings, parseOrExit } from '../../pkg/flags/flags.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { NodeCache } from '../../pkg/nodecache/program.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { nodeCacheFlags, syncIntervalMs } from './flags.ts';

const { values: f } = parseOrExit(nodeCacheFlags, process.argv.slice(2), {
  program: 'node-cache',
  usage: 'node-cache [flags]: NodeLocal DNSCache: a DNS cache on this node\'s -localip, from the node-local-dns Corefile',
});

function usageError(message: string): never {
  process.stderr.write(`node-cache: ${message}\nsee node-cache --help\n`);
  process.exit(2);
}

if (f.localip === '') usageError('-localip is required');
if (f.conf !== '' && resolve(f.conf) !== resolve(f.corefile)) usageError(`-conf ${f.conf} is not the file -corefile ${f.corefile} renders: node-cache serves what it renders`);
const log = createLogger('node-cache');

const nodeCache = new NodeCache({
  localIps: f.localip.split(','),
  setupInterface: f.setupinterface,
  interfaceName: f.interfacename,
  setupIptables: f.setupiptables,
  syncIntervalMs: syncIntervalMs(f.syncinterval)!, // checked by the flag's validator
  skipTeardown: f.skipteardown,
  baseCorefile: f.basecorefile,
  corefile: f.corefile,
  kubednsConfigDir: f.kubednscm,
  upstreamSvc: f.upstreamsvc,
  healthPort: f['health-port'],
  metricsAddress: f['metrics-listen-address'],
  dnsPort: f['dns.port'],
  serveStaleS: Math.ceil(f['serve-stale'] / 1000),
  resolvConf: f.resolvconf,
  fairShare: fairShareSettings(f['fair-share-busy'], f['fair-share-floor']),
  env: process.env,
  log,
});
const bound = await nodeCache.start().catch((err: Error) => {
  log.error('cannot start', { err: err.message });
  process.exit(1);
});
for (const b of bound) log.info('DNS listening', { address: b.address, port: b.port });
if (f.pidfile !== '') writeFileSync(f.pidfile, `${process.pid}\n`);
if (f.readyfile !== '') writeFileSync(f.readyfile, `${process.pid}\n`);

// SIGTERM: unready at once, stop serving (answering what is in flight), then remove the rules and
// interface unless -skipteardown or a successor serves the address.
stopOnSignals(log, {
  stop: async () => {
    if (f.readyfile !== '') rmSync(f.readyfile, { force: true });
    await nodeCache.stop();
    if (f.pidfile !== '') rmSync(f.pidfile, { force: true });
  },
});
