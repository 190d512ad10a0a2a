// The ConfigMap → servers-file + command line mapping, and the SIGHUP-vs-restart decision.

import t from 'tap';
import { childArgs, dnsmasqAddress, kubednsDomains, logFacility, planChange, serverOptionValues, serversFileText, underDomain } from '../../pkg/nanny/args.ts';
import type { ServerEntry } from '../../pkg/nanny/args.ts';
import { parseStubServer, parseUpstream } from '../../pkg/config/config.ts';
import { parseServersFile } from '../../pkg/dnscache/args.ts';
import { childCommand, programEntry, programName, shebangNodeFlags } from '../../pkg/nanny/exec.ts';
import { parseListenAddress } from '../../pkg/nanny/http.ts';
import { stoppedCleanly } from '../../pkg/nanny/supervisor.ts';

const MANIFEST = ['-k', '--cache-size=1000', '--no-negcache', '--dns-loop-detect', '--log-facility=-', '--server=/cluster.local/127.0.0.1#10053', '--server=/in-addr.arpa/127.0.0.1#10053', '--server=/ip6.arpa/127.0.0.1#10053'];

t.test('ConfigMap servers as dnsmasq addresses: ip:port → ip#port, [v6]:port → v6#port, default port 53', async (t) => {
  t.equal(dnsmasqAddress(parseUpstream('1.2.3.4:5353')), '1.2.3.4#5353');
  t.equal(dnsmasqAddress(parseUpstream('1.2.3.4')), '1.2.3.4#53');
  t.equal(dnsmasqAddress(parseUpstream('[fd00::1]:5353')), 'fd00::1#5353', 'dnsmasq refuses brackets');
  t.equal(dnsmasqAddress(parseUpstream('fd00::1')), 'fd00::1#53');
  t.equal(dnsmasqAddress(parseStubServer('10.0.0.10:1053')), '10.0.0.10#1053');
});

t.test('servers-file: a server= line per stub server (per domain, in order), then the upstreams', async (t) => {
  const entries: ServerEntry[] = [
    { domain: 'acme.local', host: '1.2.3.4', port: 53 },
    { domain: 'acme.local', host: '1.2.3.5', port: 5353 },
    { domain: 'corp.example', host: 'fd00::53', port: 53 },
    { domain: null, host: '8.8.8.8', port: 53 },
    { domain: null, host: '8.8.4.4', port: 5353 },
  ];
  const text = serversFileText(entries);
  t.equal(
    text,
    'server=/acme.local/1.2.3.4#53\nserver=/acme.local/1.2.3.5#5353\nserver=/corp.example/fd00::53#53\nserver=8.8.8.8#53\nserver=8.8.4.4#5353\n',
  );
  // dnscache reads it back as the same routes (dnsmasq's reading is covered by nanny-dnsmasq.test.ts).
  const back = parseServersFile(text);
  t.same(back.errors, []);
  t.same(back.servers, [{ host: '8.8.8.8', port: 53 }, { host: '8.8.4.4', port: 5353 }]);
  t.same(back.stubs.map((s) => `${s.domain} ${s.server.host} ${s.server.port}`), ['acme.local 1.2.3.4 53', 'acme.local 1.2.3.5 5353', 'corp.example fd00::53 53']);
  t.equal(serversFileText([]), '', 'no servers: an empty file');
});

t.test('command line: the args after -- unchanged, our servers-file, --no-resolv only with upstreams', async (t) => {
  t.same(childArgs(MANIFEST, '/tmp/x/servers', false), [...MANIFEST, '--servers-file=/tmp/x/servers']);
  t.same(childArgs(MANIFEST, '/tmp/x/servers', true), [...MANIFEST, '--servers-file=/tmp/x/servers', '--no-resolv']);
  t.same(childArgs(['-k', '--no-resolv'], '/s', true), ['-k', '--no-resolv', '--servers-file=/s', '--log-facility=-'], 'not twice');
  t.same(childArgs(['-k', '-R'], '/s', true), ['-k', '-R', '--servers-file=/s', '--log-facility=-'], "dnsmasq's short -R too");
});

t.test("the child's log comes to the nanny (--log-facility=-) unless its args send it elsewhere", async (t) => {
  t.same(childArgs(['-k'], '/s', false), ['-k', '--servers-file=/s', '--log-facility=-'], 'dnsmasq would log to syslog');
  for (const given of [['--log-facility=-'], ['--log-facility', 'DAEMON'], ['-8', '/var/log/d'], ['-8/var/log/d']]) {
    t.same(childArgs(given, '/s', false), [...given, '--servers-file=/s'], `${given.join(' ')} kept`);
  }
  t.equal(logFacility(['-k']), null);
  t.equal(logFacility(['--log-facility', 'DAEMON']), 'DAEMON');
  t.equal(logFacility(['-8/var/log/d']), '/var/log/d');
  t.equal(logFacility(['--log-facility=LOCAL0', '-8', '-']), '-', 'the last one wins, as in dnsmasq');
});

t.test('restart or SIGHUP: a restart only when the command line changes', async (t) => {
  const plan = (upstreams: boolean, servers: string) => ({ args: childArgs(MANIFEST, '/s', upstreams), servers });
  t.equal(planChange(null, plan(false, '')), 'start');
  t.equal(planChange(plan(false, ''), plan(false, '')), 'none');
  t.equal(planChange(plan(false, ''), plan(false, 'server=/a.b/1.2.3.4#53\n')), 'reload', 'stub domain added');
  t.equal(planChange(plan(true, 'server=1.1.1.1#53\n'), plan(true, 'server=2.2.2.2#53\n')), 'reload', 'upstream changed');
  t.equal(planChange(plan(true, 'server=1.1.1.1#53\n'), plan(true, 'server=1.1.1.1#53\nserver=2.2.2.2#53\n')), 'reload', 'upstream added to others');
  t.equal(planChange(plan(false, ''), plan(true, 'server=1.1.1.1#53\n')), 'restart', 'first upstream: --no-resolv appears');
  t.equal(planChange(plan(true, 'server=1.1.1.1#53\n'), plan(false, '')), 'restart', 'last upstream gone: --no-resolv goes');
  const noResolvAlready = (servers: string) => ({ args: childArgs(['--no-resolv'], '/s', servers !== ''), servers });
  t.equal(planChange(noResolvAlready(''), noResolvAlready('server=1.1.1.1#53\n')), 'reload', 'args already say --no-resolv: no restart');
});

t.test('cluster names: the domains the child args route to -kubednsServer', async (t) => {
  const kubedns = parseUpstream('127.0.0.1:10053');
  t.same(kubednsDomains(MANIFEST, kubedns), ['cluster.local', 'in-addr.arpa', 'ip6.arpa']);
  t.same(kubednsDomains(['--server=/My.Zone./127.0.0.1#10053'], kubedns), ['my.zone'], 'normalised');
  t.same(kubednsDomains(['--server', '/a.b/c.d/127.0.0.1#10053', '-S', '/e.f/127.0.0.1#10053', '-S/g.h/127.0.0.1#10053'], kubedns), ['a.b', 'c.d', 'e.f', 'g.h'], 'every spelling');
  t.same(kubednsDomains(['--server=/other.zone/127.0.0.1#5353', '--server=/x.y/10.0.0.1#10053'], kubedns), ['cluster.local'], 'other servers: the default');
  t.same(kubednsDomains([], kubedns), ['cluster.local']);
  t.same(kubednsDomains(['--server=/bad/'], kubedns), ['cluster.local'], 'unparseable values are the child\'s business');
  t.same(kubednsDomains(['--server=/z/[::1]#53'], parseUpstream('[::1]:53')), ['z'], 'IPv6');
  t.same(kubednsDomains(['--server=/z/0:0::1#53'], parseUpstream('[::1]:53')), ['z'], 'IPv6 spelt differently');
  t.same(serverOptionValues(['--server=1.1.1.1', '--server']), ['1.1.1.1'], 'a trailing --server without a value is skipped');
  t.ok(underDomain('kube-dns.kube-system.svc.cluster.local', ['cluster.local']));
  t.ok(underDomain('cluster.local', ['cluster.local']));
  t.notOk(underDomain('notcluster.local', ['cluster.local']));
});

t.test('exec: Node flags from the entry\'s shebang, program names for the output prefix', async (t) => {
  t.same(shebangNodeFlags('#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size'), ['--max-semi-space-size=2', '--optimize-for-size']);
  t.same(shebangNodeFlags('#!/usr/local/bin/node --optimize-for-size'), ['--optimize-for-size']);
  t.same(shebangNodeFlags('#!/bin/sh'), []);
  t.same(shebangNodeFlags('// no shebang'), []);
  t.equal(programName('/app/dist/cmd/dnscache/main.js'), 'dnscache');
  t.equal(programName('/usr/sbin/dnsmasq'), 'dnsmasq');
  t.equal(programName('/opt/fwd.mjs'), 'fwd');
});

t.test("our dnscache logs in the nanny's format unless the args after -- choose their own", async (t) => {
  const json = ['--logging-format=json'];
  t.same(childCommand(programEntry('dnscache'), process.execPath, json).logging, json);
  t.same(childCommand('/usr/sbin/dnsmasq', process.execPath, json).logging, [], 'dnsmasq has no such flags');
  const dnscache = { serversFileNoResolv: true, logging: json };
  t.same(childArgs(['-k'], '/s', false, dnscache), ['-k', '--servers-file=/s', '--log-facility=-', ...json]);
  t.same(childArgs(['-k', '--logging-format=text'], '/s', false, dnscache), ['-k', '--logging-format=text', '--servers-file=/s', '--log-facility=-'], 'their own kept, ours not added');
});

t.test('-metricsAddress', async (t) => {
  t.same(parseListenAddress(':10056'), { host: '', port: 10056 });
  t.same(parseListenAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  t.same(parseListenAddress('[::1]:9000'), { host: '::1', port: 9000 });
  t.type(parseListenAddress('10056'), 'string');
  t.type(parseListenAddress('host:70000'), 'string');
});

t.test('upstreams for our dnscache: no-resolv in its servers-file, so the command line never changes (a SIGHUP, not a restart); dnsmasq: --no-resolv', async (t) => {
  const dnscache = childCommand(programEntry('dnscache'));
  t.equal(dnscache.serversFileNoResolv, true);
  t.equal(childCommand('/usr/sbin/dnsmasq').serversFileNoResolv, false);
  t.same(childArgs(['-k'], '/s', true, dnscache), childArgs(['-k'], '/s', false, dnscache), 'the same command line with upstreams and without');
  const entry = { domain: null, host: '10.0.0.1', port: 53 };
  t.equal(serversFileText([entry], true), 'no-resolv\nserver=10.0.0.1#53\n');
  t.equal(serversFileText([entry]), 'server=10.0.0.1#53\n');
});

t.test("dnsmasq SIGTERMed before its startup is done exits 5 (EC_MISC, its sig_handler while pid == 0), after it logged started: a clean stop for it, not for ours", async (t) => {
  const exit = { code: 5, signal: null, killed: false };
  t.ok(stoppedCleanly(exit, childCommand('/usr/sbin/dnsmasq').stopCodes));
  t.notOk(stoppedCleanly(exit, childCommand(programEntry('dnscache')).stopCodes));
  t.notOk(stoppedCleanly(exit), 'nor for a program we do not know');
});
