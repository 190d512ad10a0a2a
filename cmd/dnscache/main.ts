#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// dnscache: the caching DNS forwarder, with dnsmasq's command line. Nothing else lives here.

const { rmSync, writeFileSync } = process.getBuiltinModule('node:fs');
import { configureLogging, createLogger } from '../../pkg/log/log.ts';
import { DnsCache } from '../../pkg/dnscache/program.ts';
import { DnsCacheThreads, dnscacheWorkers } from '../../pkg/dnscache/threads.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { parseArgsOrExit } from './flags.ts';

const config = parseArgsOrExit(process.argv.slice(2));
// -k is what dnsmasq needs to stay attached; dnscache never daemonizes, so it changes nothing.
// --log-facility: every value logs to stderr (the pod's way; `-` is what the manifests pass).
configureLogging({ format: config.loggingFormat, verbosity: config.verbosity });
const log = createLogger('dnscache');

// SIGHUP: servers and resolv files again, cache cleared (as dnsmasq). SIGUSR1: statistics to the log.
// Taken from the first line on: Node's default for both is to exit, and a nanny may send SIGHUP
// while we start. One that arrives before we run is applied once we do.
let running: DnsCache | DnsCacheThreads | undefined;
let reloadWanted = false;
process.on('SIGHUP', () => (running !== undefined ? running.reload() : (reloadWanted = true)));
process.on('SIGUSR1', () => void running?.logStatistics());

// --workers: more threads answering, on the same port (pkg/dnscache/threads.ts).
const threads = dnscacheWorkers(config);
const dnscache = threads.workers > 1 ? new DnsCacheThreads({ ...config, workers: threads.workers }, log) : new DnsCache(config, log);
const listening = await dnscache.start().catch((err: Error) => {
  log.error('cannot start', { err: err.message });
  process.exit(1);
});
if (config.pidFile !== '') writeFileSync(config.pidFile, `${process.pid}\n`);
running = dnscache;
for (const l of listening) log.info('listening', { address: l.address, port: l.port, cacheSize: config.cacheSize, threads: threads.workers, threadsBy: threads.why });
if (reloadWanted) dnscache.reload();

// SIGTERM: stop accepting, let queries in flight finish, remove the pid file, exit 0. No lame duck of
// its own: dnsmasq has none, and in the pod the nanny keeps it serving through the pod's.
stopOnSignals(log, {
  stop: async () => {
    await dnscache.stop();
    if (config.pidFile !== '') rmSync(config.pidFile, { force: true });
  },
});
