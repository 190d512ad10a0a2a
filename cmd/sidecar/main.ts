#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// sidecar: flags → pkg/sidecar. Nothing else lives here.

import { parseOrExit } from '../../pkg/flags/flags.ts';
import { VERSION } from '../../pkg/version/version.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { runSidecar } from '../../pkg/sidecar/program.ts';
import { parseProbeSpecs } from '../../pkg/sidecar/probe-spec.ts';
import type { ProbeSpec } from '../../pkg/sidecar/probe-spec.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { sidecarFlags, versionRequest } from './flags.ts';

const { values: f } = parseOrExit(sidecarFlags, process.argv.slice(2), {
  program: 'sidecar',
  usage: 'sidecar [flags]: DNS probes with /healthcheck/<label>, and dnsmasq cache statistics as Prometheus metrics',
});
// The original's pkg/version: `Kube-DNS <v>`, or the quoted version with --version=raw.
const version = versionRequest(f.version);
if (version !== null) {
  process.stdout.write(version === 'raw' ? `"${VERSION}"\n` : `Kube-DNS ${VERSION}\n`);
  process.exit(0);
}
const log = createLogger('sidecar');
log.info('version', { version: VERSION });

const running = await runSidecar({
  dnsmasq: { host: f['dnsmasq-addr'], port: f['dnsmasq-port'] },
  pollIntervalMs: f['dnsmasq-poll-interval-ms'],
  httpHost: f['prometheus-addr'],
  httpPort: f['prometheus-port'],
  metricsPath: f['prometheus-path'],
  namespace: f['prometheus-namespace'],
  probes: parseProbeSpecs(f.probe) as ProbeSpec[], // checked by the flag's validator
}, log).catch((err: Error) => {
  log.error('cannot start', { err: err.message });
  process.exit(1);
});
log.info('HTTP listening', { address: f['prometheus-addr'], port: running.httpPort, metrics: f['prometheus-path'] });

// SIGTERM: probes and health checks go on for --lameduck (the pod's other programs still answer), then close.
stopOnSignals(log, { lameDuckMs: f.lameduck, stop: () => running.close() });
