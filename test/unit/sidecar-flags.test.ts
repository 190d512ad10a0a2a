// The sidecar's flag spec through pkg/flags: the original's defaults, the manifest's arguments, and
// each rejection's message (the program prints it and exits 2: test/integration/sidecar-probes.test.ts).

import t from 'tap';
import { sidecarFlags } from '../../cmd/sidecar/flags.ts';
import { FlagError, parseFlags } from '../../pkg/flags/flags.ts';

t.test('the original\'s defaults', async (t) => {
  const { values } = parseFlags(sidecarFlags, []);
  t.same(
    [values['dnsmasq-addr'], values['dnsmasq-port'], values['dnsmasq-poll-interval-ms'], values['prometheus-addr'], values['prometheus-port'], values['prometheus-path'], values['prometheus-namespace'], values.probe, values.version],
    ['127.0.0.1', 53, 5000, '0.0.0.0', 10054, '/metrics', 'kubedns', [], 'false'],
  );
});

t.test('the manifest\'s arguments: one --probe per occurrence, commas kept', async (t) => {
  const { values } = parseFlags(sidecarFlags, [
    '--v=2',
    '--probe=kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV',
    '--probe=dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV',
  ]);
  t.equal(values.v, 2);
  t.same(values.probe, ['kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV', 'dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV']);
  t.equal(parseFlags(sidecarFlags, ['--version']).values.version, 'true', 'bare --version');
  t.equal(parseFlags(sidecarFlags, ['--prometheus-namespace=']).values['prometheus-namespace'], '', 'an empty namespace is allowed');
});

t.test('rejections', async (t) => {
  const cases: Array<[string[], string]> = [
    [['--probe=x,127.0.0.1,a.b,0'], 'invalid value "x,127.0.0.1,a.b,0" for flag --probe: probe "x,127.0.0.1,a.b,0": interval "0" must be positive'],
    [['--probe=ok,127.0.0.1,a.b', '--probe=x,127.0.0.1,a.b,5,MX'], 'invalid value "ok,127.0.0.1,a.b,x,127.0.0.1,a.b,5,MX" for flag --probe: probe "x,127.0.0.1,a.b,5,MX": type "MX" must be one of A, AAAA, ANY, SRV'],
    [['--probe'], 'flag needs a value: --probe'],
    [['--dnsmasq-addr=localhost'], 'invalid value "localhost" for flag --dnsmasq-addr: must be an IP address'],
    [['--dnsmasq-port=70000'], 'invalid value "70000" for flag --dnsmasq-port: must be 1-65535'],
    [['--dnsmasq-poll-interval-ms=5s'], 'invalid value "5s" for flag --dnsmasq-poll-interval-ms: not an integer'],
    [['--dnsmasq-poll-interval-ms=0'], 'invalid value "0" for flag --dnsmasq-poll-interval-ms: must be positive'],
    [['--prometheus-port=-1'], 'invalid value "-1" for flag --prometheus-port: must be 0-65535'],
    [['--prometheus-path=metrics'], 'invalid value "metrics" for flag --prometheus-path: must start with /'],
    [['--prometheus-namespace=1kube'], 'invalid value "1kube" for flag --prometheus-namespace: must be empty or a metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)'],
    [['--version=maybe'], 'invalid value "maybe" for flag --version: must be true, false or raw'],
  ];
  for (const [args, message] of cases) {
    t.throws(() => parseFlags(sidecarFlags, args), new FlagError(message.startsWith('flag needs') ? 'FLAG_MISSING' : 'FLAG_VALUE', args[args.length - 1].replace(/^--([^=]*).*$/, '$1'), message), args.join(' '));
  }
});
