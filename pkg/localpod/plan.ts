// What the local pod runs: the three containers of the kube-dns pod as the manifest starts them, moved
// to loopback and to ports a user can bind, kube-dns reading a cluster file instead of the API.

import { formatDuration } from '../flags/duration.ts';
import type { LogFormat } from '../log/log.ts';

export const LOOPBACK = '127.0.0.1';
export const CLUSTER_DOMAIN = 'cluster.local';
/** What both probes ask, as the manifest's sidecar does. */
export const PROBE_NAME = `kubernetes.default.svc.${CLUSTER_DOMAIN}`;

export interface LocalPodOptions {
  clusterFile: string;
  configDir: string;
  /** Default upstreams of kube-dns and dnscache (names outside the cluster). */
  resolvConf: string;
  /** dnscache: DNS for clients. */
  dnsPort: number;
  kubednsPort: number;
  /** kube-dns's /readiness, /healthz, /cache, /metrics. */
  healthzPort: number;
  /** The sidecar's /healthcheck/<label> and /metrics. */
  sidecarPort: number;
  /** dnsmasq-nanny's /metrics and /healthz. */
  nannyMetricsPort: number;
  probeIntervalMs: number;
  statsIntervalMs: number;
  /** --v for the three programs. */
  verbosity: number;
  /** --logging-format for the three programs and dnscache. */
  loggingFormat: LogFormat;
}

export type ProgramName = 'kube-dns' | 'dnsmasq-nanny' | 'sidecar';

export interface ProgramPlan {
  name: ProgramName;
  args: string[];
}

/** The domain of the example's ServiceEntry hosts, sent to kube-dns like the cluster domain. */
export const SERVICE_ENTRY_DOMAIN = 'global';

/** On loopback no kube-proxy routes around a stopping program: Ctrl-C and SIGTERM stop the pod at once. */
export const NO_LAME_DUCK = '--lameduck=0s';

/**
 * One answering thread each (--workers=auto would take every core, up to 8): a pod on a developer's
 * machine is for trying names, and a thread costs ~20 MiB RSS it would never use.
 */
export const ONE_THREAD = '--workers=1';

/** How the config dir is polled by kube-dns and the nanny: edits show within a second. */
const CONFIG_PERIOD = '1s';

export function kubeDnsArgs(o: LocalPodOptions): string[] {
  return [
    `--cluster-file=${o.clusterFile}`,
    `--config-dir=${o.configDir}`,
    `--config-period=${CONFIG_PERIOD}`,
    `--dns-bind-address=${LOOPBACK}`,
    `--dns-port=${o.kubednsPort}`,
    `--http-bind-address=${LOOPBACK}`,
    `--healthz-port=${o.healthzPort}`,
    `--resolv-conf=${o.resolvConf}`,
    // The example's ServiceEntry (document 003's *.test.global) answered by kube-dns itself.
    '--service-entries',
    ONE_THREAD,
    NO_LAME_DUCK,
    `--v=${o.verbosity}`,
    `--logging-format=${o.loggingFormat}`,
  ];
}

/** The nanny's flags, then after `--` dnscache's: the manifest's dnsmasq arguments on loopback. */
export function nannyArgs(o: LocalPodOptions): string[] {
  const kubedns = `${LOOPBACK}#${o.kubednsPort}`;
  return [
    `-configDir=${o.configDir}`,
    `-syncInterval=${CONFIG_PERIOD}`,
    `-kubednsServer=${LOOPBACK}:${o.kubednsPort}`,
    `-metricsAddress=${LOOPBACK}:${o.nannyMetricsPort}`,
    NO_LAME_DUCK,
    `-v=${o.verbosity}`,
    `-logging-format=${o.loggingFormat}`,
    '--',
    '-k',
    `--logging-format=${o.loggingFormat}`,
    `--port=${o.dnsPort}`,
    `--listen-address=${LOOPBACK}`,
    '--bind-interfaces',
    '--cache-size=1000',
    // As the manifest: a name asked before it was added to the cluster file answers at once.
    '--no-negcache',
    '--log-facility=-',
    `--resolv-file=${o.resolvConf}`,
    `--server=/${CLUSTER_DOMAIN}/${kubedns}`,
    `--server=/in-addr.arpa/${kubedns}`,
    `--server=/ip6.arpa/${kubedns}`,
    // In a cluster: stubDomains {"global": ["<kube-dns address>"]} in the kube-dns ConfigMap.
    `--server=/${SERVICE_ENTRY_DOMAIN}/${kubedns}`,
    // As the manifest: askers' addresses to kube-dns, for its autopath.
    '--add-subnet=32,128',
    ONE_THREAD,
  ];
}

/** The manifest's two SRV probes (kube-dns direct, and through dnscache), and dnscache's statistics. */
export function sidecarArgs(o: LocalPodOptions): string[] {
  const every = formatDuration(o.probeIntervalMs);
  return [
    `--dnsmasq-addr=${LOOPBACK}`,
    `--dnsmasq-port=${o.dnsPort}`,
    `--dnsmasq-poll-interval-ms=${o.statsIntervalMs}`,
    `--prometheus-addr=${LOOPBACK}`,
    `--prometheus-port=${o.sidecarPort}`,
    `--probe=kubedns,${LOOPBACK}:${o.kubednsPort},${PROBE_NAME},${every},SRV`,
    `--probe=dnsmasq,${LOOPBACK}:${o.dnsPort},${PROBE_NAME},${every},SRV`,
    NO_LAME_DUCK,
    `--v=${o.verbosity}`,
    `--logging-format=${o.loggingFormat}`,
  ];
}

/** In start order: kube-dns first, the nanny's forwarder sends the cluster zone to it. */
export function podPlan(o: LocalPodOptions): ProgramPlan[] {
  return [
    { name: 'kube-dns', args: kubeDnsArgs(o) },
    { name: 'dnsmasq-nanny', args: nannyArgs(o) },
    { name: 'sidecar', args: sidecarArgs(o) },
  ];
}
