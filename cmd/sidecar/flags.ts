// The sidecar's flags: the original's names and defaults (kubernetes/dns cmd/sidecar), --version and
// klog's --v as the original accepts them.

import { defineFlags, klogFlags, lameDuckFlag } from '../../pkg/flags/flags.ts';
import { ipVersion } from '../../pkg/dns/ip.ts';
import { parseProbeSpecs } from '../../pkg/sidecar/probe-spec.ts';

const port = (v: number) => (v >= 1 && v <= 65535 ? undefined : 'must be 1-65535');
const versionTrue = /^(1|t|T|true|TRUE|True)$/;
const versionFalse = /^(0|f|F|false|FALSE|False)$/;

/** --version as the original's pkg/version reads it: a Go bool, or `raw`. null: do not print. */
export function versionRequest(v: string): 'raw' | 'plain' | null {
  return v === 'raw' ? 'raw' : versionTrue.test(v) ? 'plain' : null;
}

export const sidecarFlags = defineFlags({
  'dnsmasq-addr': { type: 'string', default: '127.0.0.1', help: 'address that the dnsmasq server is listening on', validate: (v) => (ipVersion(v) === 0 ? 'must be an IP address' : undefined) },
  'dnsmasq-port': { type: 'int', default: 53, help: 'port that the dnsmasq server is listening on', validate: port },
  'dnsmasq-poll-interval-ms': { type: 'int', default: 5000, help: 'interval with which to poll dnsmasq for stats', validate: (v) => (v > 0 ? undefined : 'must be positive') },
  probe: {
    type: 'stringList',
    default: [],
    splitCommas: false,
    help:
      'probe the given DNS server with the DNS name and export probe metrics and healthcheck URI. Specified as ' +
      '<label>,<server>[:<port>],<dns name>[,<interval>][,<type>]. Healthcheck url will be exported under /healthcheck/<label>. ' +
      'interval: whole seconds (default 5) or a duration such as 500ms. <type> is one of A (default), AAAA, ANY, SRV. ' +
      "Repeat to check several servers. Example: 'mydns,127.0.0.1:53,example.com,10,A'",
    validate: (v) => {
      const r = parseProbeSpecs(v);
      return typeof r === 'string' ? r : undefined;
    },
  },
  'prometheus-addr': { type: 'string', default: '0.0.0.0', help: 'http address to bind metrics server to (empty: every address)' },
  'prometheus-port': { type: 'int', default: 10054, help: 'http port to use to export prometheus metrics (0: any free port)', validate: (v) => (v >= 0 && v <= 65535 ? undefined : 'must be 0-65535') },
  'prometheus-path': { type: 'string', default: '/metrics', help: 'http path used to export metrics', validate: (v) => (v.startsWith('/') ? undefined : 'must start with /') },
  'prometheus-namespace': {
    type: 'string',
    default: 'kubedns',
    help: 'prometheus metric namespace',
    validate: (v) => (v === '' || /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(v) ? undefined : 'must be empty or a metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)'),
  },
  version: { type: 'string', default: 'false', bareValue: 'true', help: 'print the version and exit (true|raw)', validate: (v) => (v === 'raw' || versionTrue.test(v) || versionFalse.test(v) ? undefined : 'must be true, false or raw') },
  lameduck: lameDuckFlag("probing and serving /healthcheck (the pod's DNS still answers in its lame duck)"),
  ...klogFlags,
});
