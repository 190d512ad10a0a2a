// kube-dns given CoreDNS's command line (the coredns Deployment's `-conf /etc/coredns/Corefile`):
// CoreDNS's flags → the Corefile planned (pkg/kubedns) → kube-dns. Nothing else lives here.

const { rmSync, writeFileSync } = process.getBuiltinModule('node:fs');
import { arch, platform } from 'node:os';
import { CorefileError } from '../../pkg/corefile/errors.ts';
import { defineFlags, parseOrExit } from '../../pkg/flags/flags.ts';
import { KUBE_DNS_COREFILE_PLUGINS } from '../../pkg/kubedns/corefile.ts';
import { corefileForwardCache, corefileKubeDnsOptions, corefileServedBefore } from '../../pkg/kubedns/corefile-options.ts';
import { CorefileSync, planCorefileAt } from '../../pkg/kubedns/corefile-sync.ts';
import { ownAddresses, untilOutOfService } from '../../pkg/kubedns/leave-service.ts';
import { KubeDns } from '../../pkg/kubedns/program.ts';
import { VERSION } from '../../pkg/version/version.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { stopOnSignals } from '../../pkg/signals/shutdown.ts';
import { apiSource } from './source.ts';

export const corednsFlags = defineFlags({
  conf: { type: 'string', default: 'Corefile', help: "CoreDNS's: the Corefile to serve" },
  'dns.port': { type: 'int', default: 53, help: "CoreDNS's: the port of a server block that names none", validate: (v) => (v >= 0 && v <= 65535 ? undefined : 'must be 0-65535') },
  pidfile: { type: 'string', default: '', help: "CoreDNS's: write the pid here" },
  quiet: { type: 'bool', default: false, help: "CoreDNS's: no start-up banner" },
  version: { type: 'bool', default: false, help: "CoreDNS's: print the version and exit" },
  plugins: { type: 'bool', default: false, help: "CoreDNS's: list the plugins served and exit" },
});

export async function runCorefile(argv: readonly string[]): Promise<void> {
  const { values: f } = parseOrExit(corednsFlags, argv, { program: 'kube-dns', usage: 'kube-dns -conf Corefile [flags]: serve a Corefile, as CoreDNS would' });
  if (f.version) {
    process.stdout.write(`kube-dns-ts-${VERSION}\n${platform()}/${arch() === 'x64' ? 'amd64' : arch()}, node ${process.version}\n`);
    process.exit(0);
  }
  if (f.plugins) {
    process.stdout.write(`Server types:\n  dns\n\nOther plugins:\n${KUBE_DNS_COREFILE_PLUGINS.map((p) => `  dns.${p}\n`).join('')}`);
    process.exit(0);
  }
  const log = createLogger('kube-dns');
  const ctx = { defaultPort: f['dns.port'] };
  let read;
  try {
    read = planCorefileAt(f.conf, ctx, log);
  } catch (err) {
    log.error('cannot serve the Corefile', { path: f.conf, problem: err instanceof CorefileError ? err.message : (err as Error).message });
    process.exit(1);
  }
  const plan = read.plan;
  const source = apiSource({ kubeconfig: plan.kubeconfig ?? '', kubeconfigContext: plan.kubeconfigContext ?? '', masterUrl: plan.endpoint ?? '', endpointsApi: plan.noEndpoints ? 'none' : 'endpointslices', configMap: '', configMapNamespace: 'kube-system', silentWatchMs: 300_000 }, log);
  const sync = new CorefileSync(f.conf, read, ctx, log.child('corefile'));
  const options = corefileKubeDnsOptions(plan, sync, log);
  const kubeDns = new KubeDns({ ...options, source, version: VERSION });
  sync.onPlugins = (next) => kubeDns.replacePlugins(corefileServedBefore(next, log, options.coreDnsMetrics!.answering), next.plugins, corefileForwardCache(next));
  await kubeDns.start().catch((err: Error) => {
    log.error('cannot start', { err: err.message });
    process.exit(1);
  });
  if (f.pidfile !== '') writeFileSync(f.pidfile, `${process.pid}\n`);
  // CoreDNS's banner: the server block that holds the cluster, then the version.
  if (!f.quiet) process.stdout.write(`${plan.clusterBlockZone === '' ? '.' : `${plan.clusterBlockZone}.`}:${plan.port}\nkube-dns-ts-${VERSION}\n`);
  // SIGTERM: /ready 503 and still answering for health's lameduck and until the cluster has taken the
  // pod out of its Services (pkg/kubedns/leave-service.ts), then stop and exit 0.
  const addresses = ownAddresses();
  stopOnSignals(log, {
    lameDuckMs: plan.health?.lameDuckMs ?? 0,
    lameDuck: () => kubeDns.lameDuck(),
    lameDuckUntil: () => untilOutOfService({ addresses, services: () => kubeDns.servicesAt(addresses), list: (path) => source.list(path, 2000), log: log.child('lame-duck') }),
    stop: async () => {
      await kubeDns.stop();
      if (f.pidfile !== '') rmSync(f.pidfile, { force: true });
    },
  });
}
