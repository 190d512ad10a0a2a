// kube-dns with its own flags (the original's and ours) → pkg/kubedns. Nothing else lives here.

import { fairShareSettings, parseOrExit, parseWorkers } from '../../pkg/flags/flags.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { KubeDns } from '../../pkg/kubedns/program.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { CLUSTER_KINDS } from '../../pkg/cluster/kinds.ts';
import type { EndpointsApi } from '../../pkg/cluster/kinds.ts';
import { SERVICE_ENTRY_KIND } from '../../pkg/serviceentry/kind.ts';
import { POD_KIND } from '../../pkg/autopath/kind.ts';
import { parseFederations } from '../../pkg/config/config.ts';
import { parseByteSize } from '../../pkg/flags/bytes.ts';
import { kubeDnsFlags } from './flags.ts';
import { VERSION } from '../../pkg/version/version.ts';
import { apiSource } from './source.ts';

const { values: f, set } = parseOrExit(kubeDnsFlags, process.argv.slice(2), {
  program: 'kube-dns',
  usage: 'kube-dns [flags]: the Kubernetes cluster DNS server (DNS spec 1.1.0)',
});

function usageError(message: string): never {
  process.stderr.write(`kube-dns: ${message}\nsee kube-dns --help\n`);
  process.exit(2);
}

if (set.has('version') && f.version !== 'false') {
  process.stdout.write(f.version === 'raw' ? `"${VERSION}"\n` : `Kube-DNS ${VERSION}\n`);
  process.exit(0);
}
const log = createLogger('kube-dns');
if (f['config-map'] && f['config-dir']) usageError('--config-map and --config-dir cannot be used together');
let federations = new Map<string, string>();
if (f.federations) {
  try {
    federations = parseFederations(f.federations);
  } catch (err) {
    usageError(`invalid value for --federations: ${(err as Error).message}`);
  }
}

// --cluster-file wins when given; otherwise the Kubernetes API (kubeconfig, master URL or in-cluster).
// The file source (and the YAML parser it brings) is loaded only when asked for.
const source = f['cluster-file']
  ? new (await import('../../pkg/source/file.ts')).FileSource(f['cluster-file'], { kinds: [...CLUSTER_KINDS.map((k) => k.kind), ...(f['service-entries'] ? [SERVICE_ENTRY_KIND] : []), ...(f.autopath ? [POD_KIND] : [])], log: log.child('file-source') })
  : apiSource({ kubeconfig: f['kubecfg-file'], masterUrl: f['kube-master-url'], endpointsApi: f['endpoints-api'] as EndpointsApi, configMap: f['config-map'], configMapNamespace: f['config-map-namespace'], silentWatchMs: f['silent-watch-timeout'] }, log);

const domain = f.domain.toLowerCase().replace(/\.$/, '');
const kubeDns = new KubeDns({
  domain,
  ttl: f.ttl,
  podRecords: f['pod-records'] as 'insecure' | 'disabled',
  dnsBindAddress: f['dns-bind-address'],
  dnsPort: f['dns-port'],
  httpBindAddress: f['http-bind-address'],
  healthzPort: f['healthz-port'],
  prometheusPort: process.env.PROMETHEUS_PORT ? Number(process.env.PROMETHEUS_PORT) : null,
  nameservers: f.nameservers,
  resolvConf: f['resolv-conf'],
  configDir: f['config-dir'],
  configPeriodMs: f['config-period'],
  configMap: f['config-map'],
  configMapNamespace: f['config-map-namespace'],
  federations,
  initialSyncTimeoutMs: f['initial-sync-timeout'],
  source,
  answerCacheBytes: parseByteSize(f['cache-bytes'])!,
  roundRobin: f['round-robin'],
  workers: parseWorkers(f.workers)!, // checked by the flag's validator
  fairShare: fairShareSettings(f['fair-share-busy'], f['fair-share-floor']),
  serviceEntries: f['service-entries'],
  autopath: f.autopath,
  version: VERSION,
});
await kubeDns.start().catch((err: Error) => {
  log.error('cannot start', { err: err.message });
  process.exit(1);
});

// SIGTERM: /readiness 503 and still answering for --lameduck, then stop accepting, let in-flight
// queries finish, exit 0.
stopOnSignals(log, { lameDuckMs: f.lameduck, lameDuck: () => kubeDns.lameDuck(), stop: () => kubeDns.stop() });
