// The launcher's flags: paths and ports of the local pod (defaults: the ports, the example
// cluster), and the sidecar's intervals, so tests can run it on free ports with short probes.

import { defineFlags, klogFlags } from '../../pkg/flags/flags.ts';

const port = (v: number) => (v >= 1 && v <= 65535 ? undefined : 'must be 1-65535');
const positive = (v: number) => (v > 0 ? undefined : 'must be positive');

export const localPodFlags = defineFlags({
  'cluster-file': { type: 'string', default: 'examples/cluster.yaml', help: 'the cluster objects kube-dns serves (YAML/JSON, watched)' },
  'config-dir': { type: 'string', default: 'examples/config', help: 'the kube-dns ConfigMap as files (stubDomains, upstreamNameservers), read by kube-dns and dnsmasq-nanny' },
  'resolv-conf': { type: 'string', default: '/etc/resolv.conf', help: 'default upstreams of kube-dns and dnscache for names outside the cluster' },
  'dns-port': { type: 'int', default: 1053, help: 'dnscache: DNS for clients on 127.0.0.1', validate: port },
  'kubedns-port': { type: 'int', default: 10053, help: 'kube-dns DNS on 127.0.0.1', validate: port },
  'healthz-port': { type: 'int', default: 8081, help: 'kube-dns /readiness, /healthz, /cache, /metrics', validate: port },
  'sidecar-port': { type: 'int', default: 10054, help: 'sidecar /healthcheck/<label>, /metrics', validate: port },
  'nanny-metrics-port': { type: 'int', default: 10056, help: 'dnsmasq-nanny /metrics, /healthz', validate: port },
  'probe-interval': { type: 'duration', default: 5000, help: "the sidecar's probes of kube-dns and dnscache", validate: positive },
  'stats-interval': { type: 'duration', default: 5000, help: "the sidecar's reads of dnscache's statistics", validate: (v) => (v >= 1 && Number.isInteger(v) ? undefined : 'must be whole milliseconds, at least 1ms') },
  'start-timeout': { type: 'duration', default: 60_000, help: 'give up (exit 1) when the pod does not answer within this', validate: positive },
  ...klogFlags,
});
