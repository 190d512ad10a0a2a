// kube-dns's flags: the original's names and defaults (kubernetes/dns cmd/kube-dns options.go), plus ours.

import { defineFlags, fairShareFlags, klogFlags, lameDuckFlag, workersFlag } from '../../pkg/flags/flags.ts';
import { parseByteSize } from '../../pkg/flags/bytes.ts';

const label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const kubeDnsFlags = defineFlags({
  domain: {
    type: 'string',
    default: 'cluster.local.',
    help: 'cluster domain served by kube-dns',
    validate: (v) => (v.replace(/\.$/, '').split('.').every((l) => label.test(l)) ? undefined : 'every label must be a DNS-1123 label'),
  },
  'dns-bind-address': { type: 'string', default: '0.0.0.0', help: 'address to serve DNS on (UDP and TCP)' },
  'dns-port': { type: 'int', default: 53, help: 'port to serve DNS on (UDP and TCP)', validate: (v) => (v >= 0 && v <= 65535 ? undefined : 'must be 0-65535') },
  'healthz-port': { type: 'int', default: 8081, help: 'port for /readiness, /healthz, /cache and /metrics', validate: (v) => (v >= 0 && v <= 65535 ? undefined : 'must be 0-65535') },
  'http-bind-address': { type: 'string', default: '0.0.0.0', help: 'address for the HTTP endpoints' },
  nameservers: { type: 'stringList', default: [], help: 'upstream servers ip[:port],... used when the config has no upstreamNameservers (else the resolv.conf)' },
  'resolv-conf': { type: 'string', default: '/etc/resolv.conf', help: 'resolv.conf read for upstream servers when none are configured' },
  'kubecfg-file': { type: 'string', default: '', help: 'kubeconfig file for the Kubernetes API (neither this nor --kube-master-url: the in-cluster service account)' },
  'kube-master-url': { type: 'string', default: '', help: 'URL of the Kubernetes API server, $VARS expanded; overrides the kubeconfig server (alone: no credentials)' },
  'endpoints-api': { type: 'string', default: 'endpointslices', help: 'endpoints read from: endpointslices (discovery.k8s.io/v1) or endpoints (core/v1, old clusters)', validate: (v) => (v === 'endpointslices' || v === 'endpoints' ? undefined : 'must be endpointslices or endpoints') },
  'silent-watch-timeout': { type: 'duration', default: 300_000, help: 'restart a watch that delivered no event or bookmark for this long (the server is asked to end watches after half of it)', validate: (v) => (v >= 2000 ? undefined : 'must be at least 2s') },
  federations: { type: 'string', default: '', help: 'federations as name=domain,... (used while the ConfigMap or --config-dir sets none)' },
  'config-map': { type: 'string', default: '', help: 'name of the ConfigMap holding the kube-dns config (cannot be combined with --config-dir)' },
  'config-map-namespace': { type: 'string', default: 'kube-system', help: 'namespace of --config-map' },
  'config-dir': { type: 'string', default: '', help: 'directory polled for the config files stubDomains, upstreamNameservers, federations' },
  'config-period': { type: 'duration', default: 10_000, help: 'how often --config-dir is polled' },
  'initial-sync-timeout': { type: 'duration', default: 60_000, help: 'how long to wait for the first sync before warning (never exits)' },
  profiling: { type: 'bool', default: false, help: 'accepted for compatibility; Node has no pprof endpoint', ignored: true },
  version: { type: 'string', default: 'false', bareValue: 'true', help: 'print the version and exit (true|raw)' },
  'cluster-file': { type: 'string', default: '', help: 'read cluster objects from this YAML/JSON file (kubectl get -o yaml) instead of the API; watched' },
  ttl: { type: 'int', default: 30, help: 'TTL of the records kube-dns serves', validate: (v) => (v >= 0 && v <= 3600 ? undefined : 'must be 0-3600') },
  'pod-records': { type: 'string', default: 'insecure', help: 'pod A records <a-b-c-d>.<ns>.pod.<zone>: insecure|disabled', validate: (v) => (v === 'insecure' || v === 'disabled' ? undefined : 'must be insecure or disabled') },
  autopath: { type: 'bool', default: true, help: "answer a pod's whole search walk at its first query (watches Pods; the pod's forwarder must pass its address: dnscache --add-subnet=32,128); --autopath=false: no Pod watch" },
  'service-entries': { type: 'bool', default: false, help: 'also answer the hosts of Istio ServiceEntries (networking.istio.io; watched in every namespace, or read from --cluster-file)' },
  'round-robin': { type: 'bool', default: true, help: 'rotate the order of A and AAAA answers per reply, as CoreDNS\'s loadbalance (--round-robin=false: a fixed order)' },
  'cache-bytes': {
    type: 'string',
    default: '16Mi',
    help: 'memory the pre-encoded answers may take (bytes, or with Ki, Mi, Gi); 0 keeps none',
    validate: (v) => (parseByteSize(v) === undefined ? 'must be a size: bytes, or a number with Ki, Mi, Gi, k, M or G' : undefined),
  },
  workers: workersFlag('threads answering DNS, each with its own sockets on the DNS port (SO_REUSEPORT) and answer cache (of --cache-bytes each); this thread keeps the zone and answers their misses'),
  lameduck: lameDuckFlag('answering with /readiness failing'),
  ...fairShareFlags(),
  ...klogFlags,
});
