// dnsmasq-nanny's flags: the original's names (kubernetes/dns cmd/dnsmasq-nanny), our defaults, plus
// -metricsAddress. Everything after `--` goes to the child unchanged.

import { defineFlags, klogFlags, lameDuckFlag } from '../../pkg/flags/flags.ts';
import { checkUpstream } from '../../pkg/config/upstream.ts';
import { programEntry } from '../../pkg/nanny/exec.ts';
import { parseListenAddress } from '../../pkg/nanny/http.ts';

/** Our dnscache, next to this program: main.ts when run from source, main.js from dist/. */
export const DNSCACHE_ENTRY = programEntry('dnscache');

export const nannyFlags = defineFlags({
  dnsmasqExec: { type: 'string', default: DNSCACHE_ENTRY, help: 'the forwarder to run: dnsmasq (e.g. /usr/sbin/dnsmasq), or a .js/.ts entry run with this Node (default: our dnscache)' },
  restartDnsmasq: { type: 'bool', default: true, help: 'restart the child when its command line must change (servers-only changes are applied by SIGHUP either way)' },
  configDir: { type: 'string', default: '/etc/k8s/dns/dnsmasq-nanny', help: 'directory polled for the ConfigMap files stubDomains and upstreamNameservers' },
  syncInterval: { type: 'duration', default: 10_000, help: 'how often -configDir is polled (and unresolved stub server names retried)', validate: (v) => (v > 0 ? undefined : 'must be positive') },
  kubednsServer: {
    type: 'string',
    default: '127.0.0.1:10053',
    help: 'kube-dns, ip:port: resolves stub server names under the domains the child args send to it',
    validate: (v) => {
      const r = checkUpstream(v);
      return typeof r === 'string' ? r : undefined;
    },
  },
  logInterval: { type: 'duration', default: 0, help: 'send SIGUSR1 (log statistics) to the child this often; 0 = never' },
  metricsAddress: {
    type: 'string',
    default: ':10056',
    help: 'host:port for GET /metrics and /healthz; empty = none',
    validate: (v) => {
      if (v === '') return undefined;
      const r = parseListenAddress(v);
      return typeof r === 'string' ? r : undefined;
    },
  },
  lameduck: lameDuckFlag('the child answering with /readiness failing'),
  ...klogFlags,
});
