import t from 'tap';
import { ArgsError, defaultConfig, parseArgs, parseServersFile } from '../../pkg/dnscache/args.ts';

t.test('the nanny manifest\'s arguments', async (t) => {
  const c = parseArgs(['-k', '--cache-size=1000', '--no-negcache', '--log-facility=-', '--server=/cluster.local/127.0.0.1#10053', '--server=/in-addr.arpa/127.0.0.1#10053', '--server', '/ip6.arpa/127.0.0.1#10053', '--server=8.8.8.8', '--no-resolv']);
  t.equal(c.keepInForeground, true);
  t.equal(c.cacheSize, 1000);
  t.equal(c.noNegcache, true);
  t.equal(c.noResolv, true);
  t.same(c.servers, [{ host: '8.8.8.8', port: 53 }]);
  t.same(
    c.stubs.map((s) => s.domain),
    ['cluster.local', 'in-addr.arpa', 'ip6.arpa'],
  );
  t.same(c.stubs[0].server, { host: '127.0.0.1', port: 10053 });
});

t.test('values, short options, several domains per --server, IPv6', async (t) => {
  const c = parseArgs(['-p', '5353', '-a127.0.0.1', '--listen-address=::1', '-z', '--neg-ttl', '30', '--min-cache-ttl=99999', '--max-cache-ttl=600', '--resolv-file=/tmp/r', '--dns-forward-max=500', '--pid-file=/tmp/p', '-S', '/a.test/B.Test./::1#5300', '--server=[fd00::1]#54']);
  t.equal(c.port, 5353);
  t.same(c.listenAddresses, ['127.0.0.1', '::1']);
  t.equal(c.bindInterfaces, true);
  t.equal(c.negTtl, 30);
  t.equal(c.minCacheTtl, 3600, 'capped at one hour, as dnsmasq does');
  t.equal(c.maxCacheTtl, 600);
  t.equal(c.resolvFile, '/tmp/r');
  t.equal(c.dnsForwardMax, 500);
  t.equal(c.pidFile, '/tmp/p');
  t.same(c.stubs, [
    { domain: 'a.test', server: { host: '::1', port: 5300 } },
    { domain: 'b.test', server: { host: '::1', port: 5300 } },
  ]);
  t.same(c.servers, [{ host: 'fd00::1', port: 54 }]);
  t.same(parseArgs([]), defaultConfig());
});

t.test('--cache-bytes (ours): bytes, or Kubernetes-style Ki/Mi/Gi and k/M/G', async (t) => {
  t.equal(defaultConfig().cacheBytes, 16 * 1024 * 1024);
  t.equal(parseArgs(['--cache-bytes=4096']).cacheBytes, 4096);
  t.equal(parseArgs(['--cache-bytes', '2Mi']).cacheBytes, 2 * 1024 * 1024);
  t.equal(parseArgs(['--cache-bytes=3M']).cacheBytes, 3_000_000);
  t.equal(parseArgs(['--cache-bytes=0']).cacheBytes, 0);
});

t.test('--reuse-port (ours, added by the nanny): off unless given', async (t) => {
  t.equal(defaultConfig().reusePort, false);
  t.equal(parseArgs(['--reuse-port']).reusePort, true);
});

t.test('--add-subnet: the whole address (32 or 32,128) or nothing (0); nothing else', async (t) => {
  t.equal(defaultConfig().addSubnet, false);
  t.equal(parseArgs(['--add-subnet=32,128']).addSubnet, true);
  t.equal(parseArgs(['--add-subnet=32']).addSubnet, true);
  t.equal(parseArgs(['--add-subnet=0']).addSubnet, false);
  for (const v of ['24', '32,64', '1.2.3.4/24', '']) t.throws(() => parseArgs([`--add-subnet=${v}`]), { option: 'add-subnet', message: /whole address or nothing/ }, v);
});

t.test('--logging-format and --v: the Kubernetes log flags (ours); -v stays --version', async (t) => {
  t.match(defaultConfig(), { loggingFormat: 'text', verbosity: 0 });
  t.match(parseArgs(['--logging-format=json', '--v=2']), { loggingFormat: 'json', verbosity: 2 });
  t.throws(() => parseArgs(['--logging-format=yaml']), { option: 'logging-format', message: /text or json/ });
});

t.test('errors name the option', async (t) => {
  const cases: [string[], string][] = [
    [['--dnssec'], 'dnssec'],
    [['-y'], '-y'],
    [['stray'], 'stray'],
    [['--port'], 'port'],
    [['--port=x'], 'port'],
    [['--port=70000'], 'port'],
    [['--no-resolv=yes'], 'no-resolv'],
    [['--server=not-an-ip'], 'server'],
    [['--server=/example.com/'], 'server'],
    [['--server=1.2.3.4#0'], 'server'],
    [['--server=300.1.1.1'], 'server'],
    // Looks like IPv6 but is not one: refused here, not by the forwarder at start or on SIGHUP.
    [['--server=1:2'], 'server'],
    [['--server=:::::'], 'server'],
    [['--cache-bytes=lots'], 'cache-bytes'],
    [['--cache-bytes=1.5Mi'], 'cache-bytes'],
  ];
  for (const [argv, option] of cases) {
    let caught: unknown;
    try {
      parseArgs(argv);
    } catch (err) {
      caught = err;
    }
    t.ok(caught instanceof ArgsError, argv.join(' '));
    t.match(caught, { code: 'DNSCACHE_BAD_OPTION', option }, argv.join(' '));
  }
});

t.test('serverOrder: every --server address in the order given, default and stub domains interleaved', async (t) => {
  const c = parseArgs(['--server=/corp/10.0.0.2', '--server=10.0.0.1#5353', '--server=/a/b/10.0.0.3', '-S', '::1']);
  t.same(c.serverOrder, [
    { host: '10.0.0.2', port: 53 },
    { host: '10.0.0.1', port: 5353 },
    { host: '10.0.0.3', port: 53 },
    { host: '::1', port: 53 },
  ]);
  const file = parseServersFile('server=10.0.0.9\nserver=/lab/10.0.0.8#54\nbad\nserver=10.0.0.7\n');
  t.same(file.order, [
    { host: '10.0.0.9', port: 53 },
    { host: '10.0.0.8', port: 54 },
    { host: '10.0.0.7', port: 53 },
  ]);
  t.equal(file.errors.length, 1);
  t.equal(file.noResolv, false);
  t.equal(parseServersFile('no-resolv\nserver=10.0.0.9\n').noResolv, true, "ours: a no-resolv line (the nanny's, for upstreamNameservers)");
});
