// node-cache's flags: the original's names and defaults (kubernetes/dns cmd/node-cache), CoreDNS's own
// that its manifest passes (-conf, -dns.port, -pidfile), and ours (-serve-stale, -resolvconf, -readyfile,
// -fair-share-busy, -fair-share-floor).

const { isIP } = process.getBuiltinModule('node:net');
import { defineFlags, fairShareFlags, klogFlags, parseDuration } from '../../pkg/flags/flags.ts';

/** The original's -syncinterval is whole seconds; a Go duration is taken too. */
export function syncIntervalMs(v: string): number | undefined {
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : parseDuration(v);
  return ms !== undefined && ms >= 1000 ? ms : undefined;
}

const port = (v: number) => (v >= 1 && v <= 65535 ? undefined : 'must be 1-65535');

export const nodeCacheFlags = defineFlags({
  localip: {
    type: 'string',
    default: '',
    help: 'comma-separated addresses to serve on and hold on -interfacename (e.g. 169.254.20.10,<kube-dns ClusterIP>)',
    validate: (v) => (v !== '' && v.split(',').every((ip) => isIP(ip) !== 0) ? undefined : 'must be one or more comma-separated IP addresses'),
  },
  setupinterface: { type: 'bool', default: true, help: 'create the interface holding -localip (a dummy; a port-less bridge where the kernel has no dummy driver)' },
  interfacename: { type: 'string', default: 'nodelocaldns', help: 'name of the interface holding -localip' },
  setupiptables: { type: 'bool', default: true, help: 'install the NOTRACK and ACCEPT rules for -localip (iptables; nftables where there is no iptables)' },
  syncinterval: { type: 'string', default: '60', help: 'how often the interface and rules are checked and repaired: seconds, or a duration', validate: (v) => (syncIntervalMs(v) === undefined ? 'must be at least 1 second' : undefined) },
  skipteardown: { type: 'bool', default: false, help: 'leave the interface and rules in place at exit' },
  basecorefile: { type: 'string', default: '/etc/coredns/Corefile.base', help: 'the Corefile template (the node-local-dns ConfigMap)' },
  corefile: { type: 'string', default: '/etc/Corefile', help: 'where the rendered Corefile is written (and served from)' },
  kubednscm: { type: 'string', default: '/etc/kube-dns', help: 'where the kube-dns ConfigMap is mounted (stubDomains, upstreamNameservers)' },
  upstreamsvc: { type: 'string', default: 'kube-dns', help: 'the Service whose ClusterIP replaces __PILLAR__CLUSTER__DNS__ (<NAME>_SERVICE_HOST)' },
  'health-port': { type: 'int', default: 8080, help: 'the health port the rules keep out of conntrack', validate: port },
  'metrics-listen-address': { type: 'string', default: '0.0.0.0:9353', help: 'host:port for the setup metrics (coredns_nodecache_setup_errors_total)', validate: (v) => (/^(\[[^\]]*\]|[^:]*):\d+$/.test(v) ? undefined : 'must be host:port') },
  conf: { type: 'string', default: '', help: "CoreDNS's: the Corefile to load; must be -corefile's (the manifest passes both)" },
  'dns.port': { type: 'int', default: 53, help: "CoreDNS's: the port of a server block that names none, and of the rules", validate: port },
  pidfile: { type: 'string', default: '', help: "CoreDNS's: write the pid here" },
  'serve-stale': { type: 'duration', default: 3_600_000, help: 'ours: serve-stale for every cache a serve_stale does not set: an answer this long past its expiry is given (TTL 30) when kube-dns or the upstream fails; 0 = off', validate: (v) => (v >= 0 ? undefined : 'must not be negative') },
  resolvconf: { type: 'string', default: '/etc/resolv.conf', help: 'ours: the resolv.conf whose nameservers replace __PILLAR__UPSTREAM__SERVERS__' },
  ...fairShareFlags(),
  readyfile: { type: 'string', default: '', help: "ours: a file written once this process serves and removed when it stops, for an exec readiness probe (on the host network an HTTP probe may reach a previous node-cache's health endpoint)" },
  ...klogFlags,
});
