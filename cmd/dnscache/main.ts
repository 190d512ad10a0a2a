#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// dnscache: the caching DNS forwarder, with dnsmasq's command line. Nothing else lives here.

import { rmSync, writeFileSync } from 'node:fs';
import { createLogger } from '../../pkg/log/log.ts';
import { runDnscache } from '../../pkg/dnscache/program.ts';
import type { RunningDnscache } from '../../pkg/dnscache/program.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { parseArgsOrExit } from './flags.ts';

const config = parseArgsOrExit(process.argv.slice(2));
// -k is what dnsmasq needs to stay attached; dnscache never daemonizes, so it changes nothing.
// --log-facility: every value logs to stderr (the pod's way; `-` is what the manifests pass).
const log = createLogger('dnscache');

// SIGHUP: servers and resolv files again, cache cleared (as dnsmasq). SIGUSR1: statistics to the log.
// Taken from the first line on: Node's default for both is to exit, and a nanny may send SIGHUP
// while we start. One that arrives before we run is applied once we do.
let running: RunningDnscache | undefined;
let reloadWanted = false;
process.on('SIGHUP', () => (running !== undefined ? running.reload() : (reloadWanted = true)));
process.on('SIGUSR1', () => running?.logStatistics());

const started = await runDnscache(config, log).catch((err: Error) => {
  log.error('cannot start', { error: err.message });
  process.exit(1);
});
if (config.pidFile !== '') writeFileSync(config.pidFile, `${process.pid}\n`);
running = started;
for (const l of started.listening) log.info('listening', { address: l.address, port: l.port, cacheSize: config.cacheSize });
if (reloadWanted) started.reload();

// SIGTERM: stop accepting, let queries in flight finish, remove the pid file, exit 0.
stopOnSignals(log, async () => {
  await started.close();
  if (config.pidFile !== '') rmSync(config.pidFile, { force: true });
});
