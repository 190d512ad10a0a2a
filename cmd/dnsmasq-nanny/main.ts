#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// dnsmasq-nanny: flags → pkg/nanny. Nothing else lives here.

import { parseOrExit } from '../../pkg/flags/flags.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { parseUpstream } from '../../pkg/config/config.ts';
import { childCommand } from '../../pkg/nanny/exec.ts';
import { parseListenAddress } from '../../pkg/nanny/http.ts';
import type { ListenAddress } from '../../pkg/nanny/http.ts';
import { Nanny } from '../../pkg/nanny/nanny.ts';
import { describeExit, stoppedCleanly } from '../../pkg/nanny/supervisor.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { nannyFlags } from './flags.ts';

const { values: f, rest } = parseOrExit(nannyFlags, process.argv.slice(2), {
  program: 'dnsmasq-nanny',
  usage: 'dnsmasq-nanny [flags] -- [forwarder args]: runs dnsmasq (or dnscache) with the kube-dns ConfigMap\'s servers',
});
const log = createLogger('dnsmasq-nanny');

const command = childCommand(f.dnsmasqExec);
const nanny = new Nanny({
  command,
  childArgs: rest,
  restartOnChange: f.restartDnsmasq,
  configDir: f.configDir,
  syncIntervalMs: f.syncInterval,
  kubedns: parseUpstream(f.kubednsServer), // checked by the flag's validator
  logIntervalMs: f.logInterval,
  metrics: f.metricsAddress === '' ? null : (parseListenAddress(f.metricsAddress) as ListenAddress),
  log,
});
await nanny.start().catch((err: Error) => {
  log.error('cannot start', { err: err.message });
  process.exit(1);
});

// A crash loop ends the nanny with an error, so the kubelet sees (and backs off) the container.
void nanny.crashLoop.then(async (reason) => {
  log.error('the child keeps failing, giving up', { reason });
  await nanny.stop();
  process.exit(1);
});

// SIGTERM: /readiness 503 with the child still serving for -lameduck; then to the child, wait for it,
// clean up; exit 1 only when it did not stop cleanly.
stopOnSignals(log, {
  lameDuckMs: f.lameduck,
  lameDuck: () => nanny.lameDuck(),
  stop: async () => {
    const exit = await nanny.stop();
    if (!stoppedCleanly(exit, command.stopCodes)) throw new Error(`the child did not stop cleanly: ${describeExit(exit!)}`);
  },
});
