import t from 'tap';
import { defineFlags, FlagError, formatUsage, klogFlags, parseFlags } from '../../pkg/flags/flags.ts';

const spec = defineFlags({
  ...klogFlags,
  domain: { type: 'string', default: 'cluster.local.', help: 'cluster domain' },
  'dns-port': {
    type: 'int',
    default: 53,
    help: 'DNS port',
    validate: (p) => (p < 0 || p > 65535 ? 'must be 0-65535' : undefined),
  },
  'config-period': { type: 'duration', default: 10_000, help: 'poll period' },
  nameservers: { type: 'stringList', default: ['10.0.0.10'], help: 'upstreams' },
  probe: { type: 'stringList', default: [], help: 'probes', splitCommas: false },
  restartDnsmasq: { type: 'bool', default: false, help: 'restart on change' },
  version: { type: 'string', default: 'false', help: 'print the version', bareValue: 'true' },
});

function flagError(fn: () => unknown): FlagError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FlagError) return err;
    throw err;
  }
  throw new Error('expected a FlagError');
}

t.test('defaults when nothing is given', async (t) => {
  const { values, rest, set, help } = parseFlags(spec, []);
  t.equal(values.domain, 'cluster.local.');
  t.equal(values['dns-port'], 53);
  t.equal(values['config-period'], 10_000);
  t.same(values.nameservers, ['10.0.0.10']);
  t.equal(values.restartDnsmasq, false);
  t.equal(values.v, 0);
  t.same(rest, []);
  t.equal(set.size, 0);
  t.equal(help, false);
});

t.test('the four Go spellings of a valued flag', async (t) => {
  for (const argv of [['--dns-port=10053'], ['--dns-port', '10053'], ['-dns-port=10053'], ['-dns-port', '10053']]) {
    t.equal(parseFlags(spec, argv).values['dns-port'], 10053, argv.join(' '));
  }
});

t.test('the kube-dns manifest arguments', async (t) => {
  const { values, set } = parseFlags(spec, ['--domain=cluster.local.', '--dns-port=10053', '--config-period=1m30s', '--v=2']);
  t.equal(values.domain, 'cluster.local.');
  t.equal(values['dns-port'], 10053);
  t.equal(values['config-period'], 90_000);
  t.equal(values.v, 2);
  t.same([...set].sort(), ['config-period', 'dns-port', 'domain', 'v']);
});

t.test('the nanny manifest: single dashes, and everything after -- handed back unchanged', async (t) => {
  const dnsmasqArgs = ['-k', '--cache-size=1000', '--server=/cluster.local/127.0.0.1#10053', '--', '--v=9'];
  const { values, rest } = parseFlags(spec, ['-v=2', '-restartDnsmasq=true', '--', ...dnsmasqArgs]);
  t.equal(values.v, 2);
  t.equal(values.restartDnsmasq, true);
  t.same(rest, dnsmasqArgs);
});

t.test('bool flags: bare, =true, =false and strconv.ParseBool spellings; never the next argument', async (t) => {
  t.equal(parseFlags(spec, ['--restartDnsmasq']).values.restartDnsmasq, true);
  t.equal(parseFlags(spec, ['--restartDnsmasq=false']).values.restartDnsmasq, false);
  t.equal(parseFlags(spec, ['-restartDnsmasq=T']).values.restartDnsmasq, true);
  t.equal(parseFlags(spec, ['-restartDnsmasq=0']).values.restartDnsmasq, false);
  const err = flagError(() => parseFlags(spec, ['--restartDnsmasq', 'false']));
  t.equal(err.code, 'FLAG_UNKNOWN');
  t.match(err.message, /unexpected argument "false"/);
  const bad = flagError(() => parseFlags(spec, ['--restartDnsmasq=yes']));
  t.equal(bad.code, 'FLAG_VALUE');
  t.match(bad.message, /"yes".*--restartDnsmasq/);
});

t.test('underscores and dashes name the same flag (pflag WordSepNormalizeFunc)', async (t) => {
  t.equal(parseFlags(spec, ['--dns_port=5353']).values['dns-port'], 5353);
  const { values, set } = parseFlags(spec, ['--log_dir=/tmp', '--log_backtrace_at=x.go:1']);
  t.equal(values['log-dir'], '/tmp');
  t.equal(values['log-backtrace-at'], 'x.go:1');
  t.ok(set.has('log-dir'));
});

t.test('string lists: comma separated, repeated, first use replaces the default', async (t) => {
  t.same(parseFlags(spec, ['--nameservers=1.1.1.1,8.8.8.8']).values.nameservers, ['1.1.1.1', '8.8.8.8']);
  t.same(parseFlags(spec, ['--nameservers', '1.1.1.1', '--nameservers=8.8.8.8,9.9.9.9']).values.nameservers, [
    '1.1.1.1',
    '8.8.8.8',
    '9.9.9.9',
  ]);
  t.same(parseFlags(spec, ['--nameservers=']).values.nameservers, []);
  // the default array is not shared with (or changed by) a parse
  const a = parseFlags(spec, []).values.nameservers;
  a.push('x');
  t.same(parseFlags(spec, []).values.nameservers, ['10.0.0.10']);
  t.same(spec.nameservers.default, ['10.0.0.10']);
});

t.test('a list that keeps commas (the sidecar --probe)', async (t) => {
  const { values } = parseFlags(spec, [
    '--probe=kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV',
    '--probe=dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV',
  ]);
  t.same(values.probe, [
    'kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV',
    'dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV',
  ]);
});

t.test('a string flag with a bare value (--version[=raw])', async (t) => {
  t.equal(parseFlags(spec, ['--version']).values.version, 'true');
  t.equal(parseFlags(spec, ['--version=raw']).values.version, 'raw');
  t.equal(parseFlags(spec, []).values.version, 'false');
});

t.test('durations and ints', async (t) => {
  t.equal(parseFlags(spec, ['--config-period=500ms']).values['config-period'], 500);
  t.equal(parseFlags(spec, ['--config-period', '2h']).values['config-period'], 7_200_000);
  t.equal(parseFlags(spec, ['--config-period=0']).values['config-period'], 0);
  const bare = flagError(() => parseFlags(spec, ['--config-period=10']));
  t.equal(bare.code, 'FLAG_VALUE');
  t.match(bare.message, /invalid value "10" for flag --config-period/);
  t.equal(parseFlags(spec, ['--dns-port=0x35']).values['dns-port'], 53);
  const notInt = flagError(() => parseFlags(spec, ['--dns-port=53.5']));
  t.equal(notInt.code, 'FLAG_VALUE');
  t.match(notInt.message, /"53.5".*--dns-port.*not an integer/);
  t.equal(flagError(() => parseFlags(spec, ['--dns-port=']) ).code, 'FLAG_VALUE');
});

t.test('validators run on given values, and name the flag and value', async (t) => {
  const err = flagError(() => parseFlags(spec, ['-dns-port', '70000']));
  t.equal(err.code, 'FLAG_VALUE');
  t.equal(err.flag, 'dns-port');
  t.equal(err.message, 'invalid value "70000" for flag -dns-port: must be 0-65535');
  t.equal(flagError(() => parseFlags(spec, ['--v=-1'])).code, 'FLAG_VALUE');
});

t.test('unknown flags', async (t) => {
  const err = flagError(() => parseFlags(spec, ['--domian=cluster.local.']));
  t.equal(err.code, 'FLAG_UNKNOWN');
  t.equal(err.flag, 'domian');
  t.equal(err.message, 'unknown flag: --domian');
  t.equal(flagError(() => parseFlags(spec, ['---domain=x'])).code, 'FLAG_UNKNOWN');
  t.equal(flagError(() => parseFlags(spec, ['stray'])).code, 'FLAG_UNKNOWN');
});

t.test('missing values', async (t) => {
  const last = flagError(() => parseFlags(spec, ['--domain']));
  t.equal(last.code, 'FLAG_MISSING');
  t.equal(last.message, 'flag needs a value: --domain');
  // the next argument is another flag, not the value
  t.equal(flagError(() => parseFlags(spec, ['--domain', '--v=2'])).code, 'FLAG_MISSING');
  t.equal(flagError(() => parseFlags(spec, ['--domain', '--'])).code, 'FLAG_MISSING');
  // but a negative number is a value
  t.equal(flagError(() => parseFlags(spec, ['--dns-port', '-5'])).code, 'FLAG_VALUE');
});

t.test('help stops parsing, in every spelling', async (t) => {
  for (const h of ['-h', '--help', '-help']) {
    const r = parseFlags(spec, ['--dns-port=1', h, '--unknown']);
    t.equal(r.help, true, h);
    t.equal(r.values['dns-port'], 1);
  }
});

t.test('klog flags are accepted; the ignored ones are returned as written (parseOrExit reports them)', async (t) => {
  const { values, ignored } = parseFlags(spec, [
    '--v=2',
    '--logtostderr',
    '--alsologtostderr=false',
    '--vmodule=foo=3',
    '--log-flush-frequency=5s',
    '--stderrthreshold=INFO',
    '--log-file-max-size=10',
    '--skip-headers',
    '--one-output=true',
    '--add-dir-header',
    '--skip-log-headers',
    '--log-file=/x',
    '--logging-format=json',
  ]);
  t.equal(values.v, 2);
  t.equal(values['logging-format'], 'json');
  t.same(ignored, [
    '--logtostderr=true',
    '--alsologtostderr=false',
    '--vmodule=foo=3',
    '--log-flush-frequency=5s',
    '--stderrthreshold=INFO',
    '--log-file-max-size=10',
    '--skip-headers=true',
    '--one-output=true',
    '--add-dir-header=true',
    '--skip-log-headers=true',
    '--log-file=/x',
  ]);
  t.same(parseFlags(spec, ['--v=3']).ignored, [], 'nothing ignored when no such flag is set');
  t.throws(() => parseFlags(spec, ['--logging-format=yaml']), { code: 'FLAG_VALUE', message: /must be one of text, json/ });
});

t.test('defineFlags rejects a broken spec', async (t) => {
  t.throws(() => defineFlags({ port: { type: 'int', default: 1.5, help: '' } }), TypeError);
  t.throws(() => defineFlags({ a_b: { type: 'bool', default: false, help: '' }, 'a-b': { type: 'bool', default: true, help: '' } }), TypeError);
  t.throws(() => defineFlags({ help: { type: 'bool', default: false, help: '' } }), TypeError);
  t.throws(() => defineFlags({ ' x': { type: 'bool', default: false, help: '' } }), TypeError);
  // @ts-expect-error the default does not match the type
  t.throws(() => defineFlags({ d: { type: 'duration', default: '10s', help: '' } }), TypeError);
});

t.test('usage: one line, every flag with a default where one says something, the ignored ones together at the end', async (t) => {
  t.match(formatUsage(spec, { program: 'kube-dns' }), /^Usage: kube-dns \[flags\]\n\nFlags:\n/);
  const text = formatUsage(spec, { program: 'kube-dns', usage: 'kube-dns [flags]: cluster DNS.' });
  t.match(text, /^Usage: kube-dns \[flags\]: cluster DNS\.\n\nFlags:\n/);
  t.match(text, /--domain string +cluster domain \(default "cluster\.local\."\)/);
  t.match(text, /--config-period duration +poll period \(default 10s\)/);
  t.match(text, /--nameservers strings +upstreams \(default \[10\.0\.0\.10\]\)/);
  t.match(text, /--restartDnsmasq +restart on change\n/, 'a false switch: no default');
  t.match(text, /-h, --help/);
  const [flags, ignored] = text.split('Accepted for compatibility with the original, and ignored:\n');
  t.notMatch(flags, /--logtostderr|--log-flush-frequency/, 'ignored flags are not among the flags');
  t.match(ignored, /--logtostderr/);
  t.match(ignored, /--log-flush-frequency/);
});
