// parseOrExit ends the process, so each case runs a small real program in a child Node.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const flagsModule = fileURLToPath(new URL('../../pkg/flags/flags.ts', import.meta.url));

const program = `
import { defineFlags, klogFlags, parseOrExit } from ${JSON.stringify(flagsModule)};
const spec = defineFlags({
  ...klogFlags,
  'dns-port': { type: 'int', default: 53, help: 'port to serve DNS on' },
  'config-dir': { type: 'string', default: '', help: 'directory to poll for config files' },
});
const { values, rest } = parseOrExit(spec, process.argv.slice(1), { program: 'kube-dns', usage: 'kube-dns [flags]: serves cluster DNS.' });
process.stdout.write(JSON.stringify({ port: values['dns-port'], dir: values['config-dir'], v: values.v, rest }));
`;

function run(...args: string[]) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', program, '--', ...args], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('valid flags: values returned, no exit', async (t) => {
  const r = run('--dns-port=10053', '-config-dir', '/kube-dns-config', '--v=2', '--', '-k');
  t.equal(r.status, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { port: 10053, dir: '/kube-dns-config', v: 2, rest: ['-k'] });
});

t.test('a bad value: message naming flag and value, "see --help", status 2', async (t) => {
  const r = run('--dns-port=ten');
  t.equal(r.status, 2);
  t.equal(r.stdout, '');
  t.equal(r.stderr, 'kube-dns: invalid value "ten" for flag --dns-port: not an integer\nsee kube-dns --help\n');
});

t.test('an unknown flag: status 2', async (t) => {
  const r = run('--dns-prot=53');
  t.equal(r.status, 2);
  t.match(r.stderr, /^kube-dns: unknown flag: --dns-prot\nsee kube-dns --help\n$/);
});

t.test('a missing value: status 2', async (t) => {
  const r = run('--config-dir');
  t.equal(r.status, 2);
  t.match(r.stderr, /flag needs a value: --config-dir/);
});

t.test('--help prints every flag with default and help to stdout, status 0', async (t) => {
  for (const h of ['--help', '-h']) {
    const r = run(h);
    t.equal(r.status, 0, h);
    t.match(r.stdout, /^Usage: kube-dns \[flags\]: serves cluster DNS\.\n/);
    t.match(r.stdout, /--dns-port int +port to serve DNS on \(default 53\)/);
    t.match(r.stdout, /--config-dir string +directory to poll for config files\n/, 'no empty default');
    t.match(r.stdout, /--v int +log verbosity.*\(default 0\)/);
    t.match(r.stdout, /ignored:\n.*--vmodule/, "klog's flags listed as ignored");
    t.equal(r.stderr, '');
  }
});
