#!/usr/bin/env -S node
// local-pod (npm start): the kube-dns pod's three programs on loopback. flags → pkg/localpod.

const { existsSync } = process.getBuiltinModule('node:fs');
import { parseOrExit } from '../../pkg/flags/flags.ts';
import { createLogger, setSink } from '../../pkg/log/log.ts';
import type { LogFormat } from '../../pkg/log/log.ts';
import { bannerText } from '../../pkg/localpod/banner.ts';
import { prefixLine } from '../../pkg/localpod/output.ts';
import type { LocalPodOptions } from '../../pkg/localpod/plan.ts';
import { createLocalPod } from '../../pkg/localpod/pod.ts';
import { describeTaken, portClash, portUses, takenPorts } from '../../pkg/localpod/ports.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { localPodFlags } from './flags.ts';

const { values: f } = parseOrExit(localPodFlags, process.argv.slice(2), {
  program: 'local-pod',
  usage: 'local-pod [flags]: kube-dns, dnsmasq-nanny with dnscache, and the sidecar on 127.0.0.1 (npm start)',
});
const write = (line: string) => process.stderr.write(`${line}\n`);
setSink((line) => process.stderr.write(`${prefixLine('local-pod', line.trimEnd())}\n`));
const log = createLogger('local-pod');

function usageError(message: string): never {
  process.stderr.write(`local-pod: ${message}\nsee local-pod --help\n`);
  process.exit(2);
}

const options: LocalPodOptions = {
  clusterFile: f['cluster-file'],
  configDir: f['config-dir'],
  resolvConf: f['resolv-conf'],
  dnsPort: f['dns-port'],
  kubednsPort: f['kubedns-port'],
  healthzPort: f['healthz-port'],
  sidecarPort: f['sidecar-port'],
  nannyMetricsPort: f['nanny-metrics-port'],
  probeIntervalMs: f['probe-interval'],
  statsIntervalMs: f['stats-interval'],
  verbosity: f.v,
  loggingFormat: f['logging-format'] as LogFormat,
};
if (!existsSync(options.clusterFile)) usageError(`--cluster-file ${options.clusterFile} does not exist (npm start runs from the repository root)`);
const uses = portUses(options);
const clash = portClash(uses);
if (clash !== null) usageError(clash);

// Every fixed port first: nothing is started when one is taken.
const taken = await takenPorts(uses);
if (taken.length > 0) {
  for (const t of taken) log.error(describeTaken(t));
  process.exit(1);
}

const pod = createLocalPod(options, { log, write });
let stopping = false;
const stopAll = async () => {
  stopping = true;
  if (!(await pod.close())) throw new Error('a program did not stop cleanly');
};
stopOnSignals(log, { stop: stopAll });

async function giveUp(reason: string): Promise<never> {
  stopping = true;
  log.error('stopping the pod', { reason });
  await pod.close();
  process.exit(1);
}

void pod.crashLoop.then(giveUp);
const failure = await pod.start(f['start-timeout']);
if (!stopping) {
  if (failure !== null) await giveUp(failure);
  log.info('the pod is up', { pid: process.pid, ...pod.pids() });
  process.stdout.write(bannerText(options));
}
