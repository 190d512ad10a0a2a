// The same Corefiles (kubeadm's; minikube's hosts block with `any`) given to CoreDNS 1.15 and to
// kube-dns (-conf), both reading the same real API server, asked the same questions: every record
// kind, in and out of the cluster zone, misses, reverse. For each question the rcode, the flags, the answer (names, types, TTLs, data) and the
// authority (names and types) must agree, but for the cases named in DIFFERENCES, each with why (the
// README's "Replacing CoreDNS" says the same). CoreDNS is built by bench/build-coredns.sh (npm test's
// pretest builds the e2e binaries; without CoreDNS the test fails in CI and skips elsewhere, loudly).

import t from 'tap';
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corednsBin } from './harness/coredns.ts';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { k3sCorefile, kubeadmCorefile } from './harness/manifests.ts';
import { dig } from '../helpers/dig.ts';
import type { DigRecord, DigResult } from '../helpers/dig.ts';
import { startDnsmasq } from '../helpers/dnsmasq.ts';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/ports.ts';
import { repoRoot, startCommand } from '../helpers/process.ts';

const SRV_PRIORITY = 'SRV priority 10, as kube-dns has always answered and the DNS spec shows (CoreDNS: 0); clients compare priorities only between records of one answer';
const REVERSE_AA = 'a PTR of a cluster address without aa, as kube-dns has always answered (CoreDNS sets aa); stub resolvers do not look at it';
/** Where we answer differently on purpose, given kubeadm's Corefile: question → why. */
const DIFFERENCES: Record<string, string> = {
  '_http._tcp.web.app.svc.cluster.local SRV': SRV_PRIORITY,
  '_dns._udp.web.app.svc.cluster.local SRV': SRV_PRIORITY,
  'web.app.svc.cluster.local SRV': SRV_PRIORITY,
  '_pg._tcp.db.app.svc.cluster.local SRV': SRV_PRIORITY,
  'web.app.svc.cluster.local ANY': "the name's records, as kube-dns has always answered ANY; CoreDNS's kubernetes answers NODATA (with `any` both give RFC 8482's HINFO)",
  'cluster.local NS': "the zone's NS (ns.dns.<zone>), as kube-dns has always answered; CoreDNS answers NODATA unless a Service kube-system/kube-dns exists",
};

/** kubeadm's Corefile on `port`, forwarding to `upstream`, reading the API with `kubeconfig`; endpoints off (two servers on one machine). */
function corefile(port: number, upstream: number, kubeconfig: string): string {
  return kubeadmCorefile()
    .replace('.:53 {', `.:${port} {\n    bind 127.0.0.1`)
    .replace(/health \{\n\s*lameduck 5s\n\s*\}\n/, '')
    .replace(/^\s*ready\n/m, '')
    .replace(/^\s*prometheus :9153\n/m, '')
    .replace('forward . /etc/resolv.conf {', `forward . 127.0.0.1:${upstream} {`)
    .replace('ttl 30', `ttl 30\n       kubeconfig ${kubeconfig}`);
}

/** `text` with `lines` put before its first line that starts with `before` (which must be there). */
function withLines(text: string, before: string, lines: string[]): string {
  const at = text.indexOf(`\n${before}`);
  if (at < 0) throw new Error(`no line starting ${JSON.stringify(before)}`);
  return `${text.slice(0, at + 1)}${lines.join('\n')}\n${text.slice(at + 1)}`;
}

/**
 * What must agree: rcode, flags but RA, the answer whole (sorted; an SOA's serial aside, a timestamp of
 * each server's own), the authority's names and types. RA is ours on every reply (this server does
 * recurse, through forward); CoreDNS leaves it clear on the kubernetes plugin's answers, where dig
 * warns "recursion requested but not available".
 */
function shape(r: DigResult, ttl = (a: DigRecord) => String(a.ttl)): string {
  const data = (a: DigRecord) => (a.type === 'SOA' ? a.data.replace(/^(\S+ \S+) \d+/, '$1 <serial>') : a.data);
  const rec = (a: DigRecord) => `${a.name.toLowerCase()} ${ttl(a)} ${a.class} ${a.type} ${data(a)}`;
  return JSON.stringify({ status: r.status, flags: r.flags.filter((f) => f !== 'ra').sort(), answer: r.answer.map(rec).sort(), authority: r.authority.map((a) => `${a.name.toLowerCase()} ${a.type}`).sort() });
}

/**
 * Alike, or alike but for TTLs a cache has aged by a second or two (CoreDNS answers a name an earlier
 * question fetched from its cache: 29 where a fresh answer says 30).
 */
function alike(a: DigResult, b: DigResult): boolean {
  if (shape(a) === shape(b)) return true;
  if (shape(a, () => '') !== shape(b, () => '')) return false;
  const ttls = (r: DigResult) => r.answer.map((x) => [`${x.name.toLowerCase()} ${x.type} ${x.data}`, x.ttl] as const).sort(([p], [q]) => (p < q ? -1 : 1));
  return ttls(a).every(([, t], i) => Math.abs(t - ttls(b)[i][1]) <= 2);
}

const QUERY_LINE = /^\[INFO\] (\S+):\d+ - \d+ "(\S+) (\S+) (\S+) (\S+) (\d+) (\S+) (\d+)" (\S+) (\S+) (\d+) [\d.]+s$/gm;

/**
 * The query log lines in `output` (CoreDNS's common format), sorted, without the asker's port, the
 * ID, the time taken, RA (see shape()) and the sizes: CoreDNS logs its own re-encoding of the request
 * (the EDNS options it does not support, dig's cookie, scrubbed) and of the reply (uncompressed);
 * kube-dns logs the bytes received and sent.
 */
function queryLines(output: string): string[] {
  return [...output.matchAll(QUERY_LINE)].map((m) => `${m[1]} "${m[2]} ${m[3]} ${m[4]} ${m[5]} ${m[7]} ${m[8]}" ${m[9]} ${m[10].split(',').filter((f) => f !== 'ra').join(',')}`).sort();
}

/** Each logged question (`name type`) → the reply size logged. */
function loggedReplySizes(output: string): Map<string, number> {
  return new Map([...output.matchAll(QUERY_LINE)].map((m) => [`${m[4]} ${m[2]}`, Number(m[11])]));
}

function corednsCanRun(t: Test): string | null {
  const bin = corednsBin();
  if (bin !== null) return bin;
  const why = 'CoreDNS not built (bash bench/build-coredns.sh)';
  if (process.env.CI === 'true') t.fail(why);
  else t.skip(why, () => {});
  return null;
}

/** Each question asked of both; alike, or a difference `differences` names. */
async function compare(t: Test, questions: readonly [string, string][], ours: number, theirs: number, differences: Record<string, string>, digArgs: string[] = []): Promise<Map<string, DigResult>> {
  const differing: string[] = [];
  const answered = new Map<string, DigResult>();
  for (const [name, type] of questions) {
    // hostname.bind and its kin are asked in class CH, as chaos answers them.
    const chaos = /\.(bind|server)$/.test(name) ? ['-c', 'CH'] : [];
    const ask = (port: number) => (type === 'PTR' ? dig(port, '', 'PTR', ['-x', name, ...digArgs]) : dig(port, name, type, [...chaos, ...digArgs]));
    const [a, b] = [await ask(ours), await ask(theirs)];
    const key = `${name} ${type}`;
    answered.set(`${name.toLowerCase()}. ${type}`, a);
    t.ok(a.flags.includes('ra'), `${key}: RA set by kube-dns`);
    if (alike(a, b)) {
      t.pass(`${key}: alike`);
      t.notOk(differences[key], `${key}: listed as a difference but alike`);
    } else {
      differing.push(`${key}\n  kube-dns: ${shape(a)}\n  CoreDNS:  ${shape(b)}`);
      t.ok(differences[key], `${key}: differs (${differences[key] ?? 'not a known difference'})\n  kube-dns: ${shape(a)}\n  CoreDNS:  ${shape(b)}`);
    }
  }
  t.comment(`${questions.length - differing.length} of ${questions.length} questions alike`);
  for (const d of differing) t.comment(d);
  return answered;
}

t.test('the same Corefiles: CoreDNS 1.15 and kube-dns -conf answer alike', async (t) => {
  if (!e2eCanRun(t)) return;
  const bin = corednsCanRun(t);
  if (bin === null) return;
  const cluster = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kdt-differential-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const up = await startDnsmasq(t, ['192.0.2.7 www.example.org', '2001:db8::7 www.example.org', '192.0.2.77 legacy.cluster.local'], ['--local-ttl=300', '--host-record=short.example.org,192.0.2.8,1']);
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'app' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'app' }, spec: { clusterIP: 'None', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'db-1', namespace: 'app', labels: { 'kubernetes.io/service-name': 'db', 'endpointslice.kubernetes.io/managed-by': 'e2e' } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.0.1'], hostname: 'db-0', conditions: { ready: true } }, { addresses: ['10.1.0.2'], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: 'app', name: 'db-pod-2' } }], ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'app' }, spec: { type: 'ExternalName', externalName: 'www.example.org' } },
    // 120 addresses: an A answer of about 2 KB, more than bufsize 1232 lets through UDP.
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'big', namespace: 'app' }, spec: { clusterIP: 'None', ports: [{ name: 'p', port: 80, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'big-1', namespace: 'app', labels: { 'kubernetes.io/service-name': 'big', 'endpointslice.kubernetes.io/managed-by': 'e2e' } }, addressType: 'IPv4',
      endpoints: Array.from({ length: 120 }, (_, i) => ({ addresses: [`10.2.${i >> 8}.${i & 255}`], conditions: { ready: true } })), ports: [{ name: 'p', port: 80, protocol: 'TCP' }],
    },
  ]);
  // Pods as the kubelet reports them: dig's own address is a pod of `app` (autopath acts on the asker's pod).
  for (const [name, ip] of [['asker', '127.0.0.1'], ['other', '10.1.2.3']]) {
    await cluster.apply([{ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'app' }, spec: { containers: [{ name: 'c', image: 'example.invalid/c' }] } }]);
    const patched = await cluster.request('PATCH', `/api/v1/namespaces/app/pods/${name}/status`, { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
    if (patched.status !== 200) throw new Error(`pod ${name}: status ${patched.status}`);
  }
  const web = (await cluster.request('GET', '/api/v1/namespaces/app/services/web')).body.spec.clusterIP as string;
  const kubernetesIp = (await cluster.request('GET', '/api/v1/namespaces/default/services/kubernetes')).body.spec.clusterIP as string;
  DIFFERENCES[`${web} PTR`] = REVERSE_AA;
  DIFFERENCES['10.1.0.1 PTR'] = REVERSE_AA;

  const shapes: { name: string; text: (port: number, kubeconfig: string) => string; questions: [string, string][]; differences: Record<string, string>; logged?: boolean; digArgs?: string[] }[] = [
    {
      name: "kubeadm's",
      text: (port, kubeconfig) => corefile(port, up.port, kubeconfig),
      differences: DIFFERENCES,
      questions: [
        ['web.app.svc.cluster.local', 'A'], ['web.app.svc.cluster.local', 'AAAA'], ['web.app.svc.cluster.local', 'TXT'],
        ['_http._tcp.web.app.svc.cluster.local', 'SRV'], ['_dns._udp.web.app.svc.cluster.local', 'SRV'], ['web.app.svc.cluster.local', 'SRV'],
        ['db.app.svc.cluster.local', 'A'], ['db-0.db.app.svc.cluster.local', 'A'], ['_pg._tcp.db.app.svc.cluster.local', 'SRV'],
        ['ext.app.svc.cluster.local', 'A'], ['ext.app.svc.cluster.local', 'CNAME'],
        ['10-1-2-3.app.pod.cluster.local', 'A'],
        ['nothing.app.svc.cluster.local', 'A'], ['web.nowhere.svc.cluster.local', 'A'], ['app.svc.cluster.local', 'A'], ['svc.cluster.local', 'A'],
        ['cluster.local', 'SOA'], ['cluster.local', 'NS'], ['WEB.App.SVC.cluster.local', 'A'],
        [web, 'PTR'], ['10.1.0.1', 'PTR'], ['192.0.2.7', 'PTR'],
        ['www.example.org', 'A'], ['www.example.org', 'AAAA'], ['nothing.example.org', 'A'], ['web.app.svc.cluster.local', 'ANY'],
        // A TTL of 1 upstream: raised to the cache's MINTTL (5 s), as CoreDNS's cache raises it.
        ['short.example.org', 'A'],
      ],
    },
    {
      // minikube's hosts block (inline, fallthrough; this machine's /etc/hosts under it, for both) and `any`.
      name: "minikube's hosts, and any",
      differences: {},
      text: (port, kubeconfig) => withLines(corefile(port, up.port, kubeconfig), '    forward .', ['    any', '    hosts {', '       192.168.49.1 host.minikube.internal', '       fallthrough', '    }']),
      questions: [
        ['host.minikube.internal', 'A'], ['host.minikube.internal', 'AAAA'], ['HOST.minikube.internal', 'A'], ['192.168.49.1', 'PTR'],
        ['web.app.svc.cluster.local', 'ANY'], ['www.example.org', 'ANY'], ['web.app.svc.cluster.local', 'A'], ['www.example.org', 'A'],
      ],
    },
  ];
  shapes.push({
    // MicroK8s' and Talos' error log, minikube's bare log for one zone: the lines must agree but for the asker's port and ID, the time taken, and RA (as above).
    name: 'query logs (log . { class error }, log example.org)',
    differences: {},
    text: (port, kubeconfig) => withLines(corefile(port, up.port, kubeconfig), '    errors', ['    log example.org', '    log . {', '       class error denial', '    }']),
    logged: true,
    questions: [
      ['www.example.org', 'A'], ['nothing.example.org', 'AAAA'], ['web.app.svc.cluster.local', 'A'], ['nothing.app.svc.cluster.local', 'A'],
      ['web.app.svc.cluster.local', 'TXT'], ['WEB.App.svc.cluster.local', 'A'], ['www.example.org', 'MX'],
    ],
  });
  shapes.push({
    // What operators write most (../shared/reference/corefiles.md): name rules of every match kind, the
    // block form with `answer name` (Gardener's), a `continue` run, a CNAME through a rewrite, a
    // relayed answer, an invalid result.
    name: 'rewrite',
    differences: {},
    text: (port, kubeconfig) =>
      withLines(corefile(port, up.port, kubeconfig), '    kubernetes', [
        '    rewrite name exact db.example.org web.app.svc.cluster.local',
        '    rewrite name suffix .internal.corp .app.svc.cluster.local answer auto',
        '    rewrite stop {',
        '       name regex (.*)-(app)\\.example\\.net {1}.{2}.svc.cluster.local',
        '       answer name (.*)\\.(app)\\.svc\\.cluster\\.local {1}-{2}.example.net',
        '    }',
        '    rewrite name substring legacy-ns app',
        '    rewrite continue name prefix api. web.',
        '    rewrite name suffix .svc.corp .svc.cluster.local answer auto',
        '    rewrite name exact alias.example.org www.example.org',
        '    rewrite name exact ext.example.org ext.app.svc.cluster.local',
        '    rewrite name regex ^(x+)\\.long\\.test\\.$ {1}{1}.example.org',
      ]),
    questions: [
      ['db.example.org', 'A'], ['DB.Example.org', 'A'], ['web.internal.corp', 'A'], ['web-app.example.net', 'A'], ['web-app.example.net', 'AAAA'],
      ['db.legacy-ns.svc.cluster.local', 'A'], ['api.app.svc.corp', 'A'], ['alias.example.org', 'A'], ['alias.example.org', 'AAAA'],
      ['ext.example.org', 'A'], [`${'x'.repeat(40)}.long.test`, 'A'], ['nothing.internal.corp', 'A'], ['www.example.org', 'A'],
    ],
  });
  shapes.push({
    // autopath as its README has it (`pods verified`, `autopath @kubernetes`); dig asks from a pod of
    // `app`: CoreDNS takes the packet's source (127.0.0.1), kube-dns a loopback sender's Client Subnet
    // (the pod's own forwarder's: pkg/autopath), so dig sends both.
    name: 'autopath @kubernetes, pods verified',
    digArgs: ['+subnet=127.0.0.1/32'],
    differences: {
      'nothing.example.org.app.svc.cluster.local A':
        'a walk that ends in a failure upstream (here REFUSED) is answered as without autopath, NXDOMAIN, and the client walks on to the same end (pkg/autopath); CoreDNS hands it the failure at its first query',
    },
    text: (port, kubeconfig) => withLines(corefile(port, up.port, kubeconfig).replace('pods insecure', 'pods verified'), '    kubernetes', ['    autopath @kubernetes']),
    questions: [
      ['10-1-2-3.app.pod.cluster.local', 'A'], ['10-1-2-4.app.pod.cluster.local', 'A'], ['10-1-2-3.default.pod.cluster.local', 'A'], ['10-1-2-3.app.pod.cluster.local', 'AAAA'],
      ['www.example.org.app.svc.cluster.local', 'A'], ['web.app.app.svc.cluster.local', 'A'], ['nothing.example.org.app.svc.cluster.local', 'A'],
      ['www.example.org.other.svc.cluster.local', 'A'], ['web.app.svc.cluster.local', 'A'],
    ],
  });
  shapes.push({
    // OpenShift's dns-operator Corefile (../shared/reference/corefiles.md): its own port, bufsize 1232,
    // the error log, a sequential forward, cache 900 with denials for 30 s, a zone's block with its own
    // policy, and hostname.bind's chaos block.
    name: "OpenShift's",
    differences: {
      [`${web} PTR`]: REVERSE_AA,
    },
    digArgs: ['+bufsize=4096', '+ignore'],
    text: (port, kubeconfig) => `.:${port} {
    bind 127.0.0.1
    bufsize 1232
    errors
    log . {
        class error
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        kubeconfig ${kubeconfig}
    }
    forward . 127.0.0.1:${up.port} {
        policy sequential
    }
    cache 900 {
        denial 9984 30
    }
    reload
}
example.org:${port} {
    bind 127.0.0.1
    forward . 127.0.0.1:${up.port} {
        policy round_robin
    }
    errors
    bufsize 1232
    cache 900 {
        denial 9984 30
    }
}
hostname.bind:${port} {
    bind 127.0.0.1
    chaos
}
`,
    questions: [
      ['web.app.svc.cluster.local', 'A'], ['big.app.svc.cluster.local', 'A'], ['www.example.org', 'A'], ['nothing.example.org', 'A'],
      ['hostname.bind', 'TXT'], ['version.bind', 'TXT'], [web, 'PTR'],
    ],
  });
  shapes.push({
    // forward's except: the root's zones and a stub block's, each zone the business of the block that
    // would forward its names (the root's www.example.org belongs to the block of www.example.org).
    name: "forward's except, beside a stub block",
    differences: {},
    text: (port, kubeconfig) =>
      `${corefile(port, up.port, kubeconfig).replace(/(forward \. 127\.0\.0\.1:\d+ \{)/, '$1\n       except example.org corp.internal www.example.org')}www.example.org:${port} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${up.port} {\n        except private.www.example.org elsewhere.test\n    }\n}\n`,
    questions: [
      ['www.example.org', 'A'], ['short.example.org', 'A'], ['example.org', 'SOA'], ['x.corp.internal', 'A'], ['private.www.example.org', 'A'], ['a.private.www.example.org', 'AAAA'],
      ['elsewhere.test', 'A'], ['legacy.cluster.local', 'A'],
    ],
  });
  shapes.push({
    // template as the survey found it written: addresses made from names (named groups), NXDOMAIN for a
    // zone with its SOA, a blocked zone, a CNAME followed, no fallthrough (SERVFAIL), a TXT from a group.
    name: 'template',
    differences: {},
    text: (port, kubeconfig) =>
      withLines(corefile(port, up.port, kubeconfig), '    kubernetes', [
        '    template IN A example.net {',
        '       match "^ip-(?P<a>\\d+)-(?P<b>\\d+)-(?P<c>\\d+)-(?P<d>\\d+)[.]example[.]net[.]$"',
        '       answer "{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"',
        '       fallthrough',
        '    }',
        '    template IN AAAA example.net {',
        '       rcode NXDOMAIN',
        '       authority "example.net. 60 IN SOA ns.example.net. hostmaster.example.net. 1 60 60 60 60"',
        '    }',
        '    template IN TXT example.net {',
        '       match ^(.*)[.]example[.]net[.]$',
        '       answer "{{ .Name }} 30 IN TXT {{ index .Match 1 }}"',
        '    }',
        '    template ANY ANY blocked.test {',
        '       rcode NXDOMAIN',
        '    }',
        '    template IN A alias.test {',
        '       answer "{{ .Name }} 60 IN CNAME www.example.org"',
        '    }',
        '    template IN A nofall.test {',
        '       match ^good[.]',
        '       answer "{{ .Name }} 60 IN A 192.0.2.9"',
        '    }',
      ]),
    questions: [
      ['ip-10-1-2-3.example.net', 'A'], ['IP-10-1-2-3.Example.net', 'A'], ['ip-10-1-2-3.example.net', 'AAAA'], ['other.example.net', 'A'], ['foo.example.net', 'TXT'],
      ['x.blocked.test', 'A'], ['x.blocked.test', 'MX'], ['alias.test', 'A'], ['good.nofall.test', 'A'], ['bad.nofall.test', 'A'], ['good.nofall.test', 'AAAA'],
      ['web.app.svc.cluster.local', 'A'],
    ],
  });
  shapes.push({
    // kubernetes with a CIDR for its reverse zone and a bare fallthrough: cluster names no Service holds go upstream.
    name: 'kubernetes 10.0.0.0/8 with fallthrough',
    differences: { '10.1.0.1 PTR': REVERSE_AA },
    text: (port, kubeconfig) => {
      const text = corefile(port, up.port, kubeconfig).replace('kubernetes cluster.local in-addr.arpa ip6.arpa {', 'kubernetes cluster.local 10.0.0.0/8 {').replace('fallthrough in-addr.arpa ip6.arpa', 'fallthrough');
      if (!text.includes('10.0.0.0/8 {') || /fallthrough in-addr/.test(text)) throw new Error("kubeadm's kubernetes block not found");
      return text;
    },
    questions: [
      ['legacy.cluster.local', 'A'], ['web.app.svc.cluster.local', 'A'], ['nothing.app.svc.cluster.local', 'A'], ['10.1.0.1', 'PTR'], ['192.0.2.7', 'PTR'], ['10.9.9.9', 'PTR'],
    ],
  });
  shapes.push({
    // cache ZONES and `disable` of a zone outside the cluster: what the cache keeps shows in the TTLs
    // (capped at 30 where it keeps, the upstream's 300, or 1, where it does not).
    name: 'cache example.org cluster.local { disable success short.example.org }',
    differences: {},
    text: (port, kubeconfig) => corefile(port, up.port, kubeconfig).replace('cache 30 {', 'cache 30 example.org cluster.local {\n       disable success short.example.org'),
    questions: [['www.example.org', 'A'], ['short.example.org', 'A'], ['nothing.example.org', 'A'], ['192.0.2.7', 'PTR'], ['www.example.org', 'AAAA']],
  });
  const endpointQuestions: [string, string][] = [
    ['_pg._tcp.db.app.svc.cluster.local', 'SRV'], ['db.app.svc.cluster.local', 'A'], ['db-0.db.app.svc.cluster.local', 'A'], ['db-pod-2.db.app.svc.cluster.local', 'A'],
    ['10-1-0-2.db.app.svc.cluster.local', 'A'], ['10.1.0.2', 'PTR'], ['web.app.svc.cluster.local', 'A'], ['_http._tcp.web.app.svc.cluster.local', 'SRV'],
  ];
  shapes.push({
    // kubernetes `endpoint_pod_names`: an endpoint without a hostname is named by its pod (db-pod-2), not its address.
    name: 'kubernetes endpoint_pod_names',
    differences: { '_pg._tcp.db.app.svc.cluster.local SRV': SRV_PRIORITY, '_http._tcp.web.app.svc.cluster.local SRV': SRV_PRIORITY, '10.1.0.2 PTR': REVERSE_AA },
    text: (port, kubeconfig) => corefile(port, up.port, kubeconfig).replace('pods insecure', 'pods insecure\n       endpoint_pod_names'),
    questions: endpointQuestions,
  });
  shapes.push({
    // kubernetes `noendpoints`: EndpointSlices not read; headless services and endpoint names are NXDOMAIN.
    name: 'kubernetes noendpoints',
    differences: { '_http._tcp.web.app.svc.cluster.local SRV': SRV_PRIORITY },
    text: (port, kubeconfig) => corefile(port, up.port, kubeconfig).replace('pods insecure', 'pods insecure\n       noendpoints'),
    questions: endpointQuestions,
  });
  shapes.push({
    // kubernetes `namespaces`: only app's Services and pods exist.
    name: 'kubernetes namespaces app',
    differences: { [`${web} PTR`]: REVERSE_AA },
    text: (port, kubeconfig) => corefile(port, up.port, kubeconfig).replace('pods insecure', 'pods insecure\n       namespaces app'),
    questions: [
      ['web.app.svc.cluster.local', 'A'], ['kubernetes.default.svc.cluster.local', 'A'], ['default.svc.cluster.local', 'A'], ['app.svc.cluster.local', 'A'],
      ['10-1-2-3.app.pod.cluster.local', 'A'], ['10-1-2-3.default.pod.cluster.local', 'A'], ['default.pod.cluster.local', 'A'], ['app.pod.cluster.local', 'A'],
      [web, 'PTR'], [kubernetesIp, 'PTR'],
    ],
  });
  shapes.push({
    // k3s's: its NodeHosts file as `hosts` (ttl, reload, fallthrough), and the custom ConfigMap's
    // imports, an override inside the block and a server block at the top (each server its own copy:
    // the block names its port).
    name: "k3s's NodeHosts and imports",
    differences: {},
    text: (port, kubeconfig) => {
      const own = join(dir, `k3s-${port}`);
      mkdirSync(join(own, 'custom'), { recursive: true });
      writeFileSync(join(own, 'NodeHosts'), '10.200.0.1 node-a\n10.200.0.2 node-b node-b.lan\n');
      writeFileSync(join(own, 'custom', 'any.override'), 'any\n');
      writeFileSync(join(own, 'custom', 'corp.server'), `corp.example:${port} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${up.port}\n}\n`);
      return k3sCorefile({ port, kubeconfig, nodeHosts: join(own, 'NodeHosts'), hostsReload: '15s', upstream: up.port, custom: join(own, 'custom') });
    },
    questions: [
      ['node-b', 'A'], ['node-b.lan', 'A'], ['node-b', 'AAAA'], ['10.200.0.1', 'PTR'], ['www.example.org', 'A'], ['www.example.org', 'ANY'],
      ['web.app.svc.cluster.local', 'A'], ['nothing.corp.example', 'A'],
    ],
  });
  // A zone file as the file plugin's README writes one: $ORIGIN, $TTL, relative names, an owner left
  // blank, a multi-line SOA, CNAMEs in and out of the zone, MX, SRV, a wildcard, an empty non-terminal, a delegation.
  writeFileSync(join(dir, 'db.example.net'), `$ORIGIN example.net.
$TTL 3600
@       IN SOA ns1.example.net. hostmaster.example.net. (
                2024010101 ; serial
                7200 3600 1209600 300 )
        IN NS  ns1
        IN NS  ns2.example.net.
ns1     IN A   192.0.2.53
ns2     IN A   192.0.2.54
www 300 IN A   192.0.2.80
        IN AAAA 2001:db8::80
alias   IN CNAME www
ext     IN CNAME www.example.org.
mail    IN MX  10 mx
mx      IN A   192.0.2.25
_sip._tcp IN SRV 10 5 5060 sip
sip     IN A   192.0.2.60
*.wild  IN A   192.0.2.99
deep.ent IN TXT "deep"
sub     IN NS  ns.sub
ns.sub  IN A   192.0.2.100
txt     IN TXT "hello world" two
`);
  shapes.push({
    name: 'file (a zone of its own block)',
    differences: {},
    text: (port, kubeconfig) => `${corefile(port, up.port, kubeconfig)}example.net:${port} {\n    bind 127.0.0.1\n    file ${join(dir, 'db.example.net')}\n}\n`,
    questions: [
      ['www.example.net', 'A'], ['WWW.Example.net', 'AAAA'], ['www.example.net', 'MX'], ['alias.example.net', 'A'], ['ext.example.net', 'A'], ['mail.example.net', 'MX'],
      ['_sip._tcp.example.net', 'SRV'], ['x.wild.example.net', 'A'], ['y.z.wild.example.net', 'A'], ['x.wild.example.net', 'TXT'], ['ent.example.net', 'A'],
      ['nothing.example.net', 'A'], ['example.net', 'SOA'], ['example.net', 'NS'], ['host.sub.example.net', 'A'], ['txt.example.net', 'TXT'], ['alias.example.net', 'CNAME'],
    ],
  });
  for (const shape of shapes) {
    await t.test(`${shape.name} Corefile`, async (t) => {
      const [ours, theirs] = [await freePort(), await freePort()];
      writeFileSync(join(dir, 'ours'), shape.text(ours, cluster.kubeconfig(cluster.kubeDnsToken)));
      writeFileSync(join(dir, 'theirs'), shape.text(theirs, cluster.kubeconfig(cluster.adminToken)));
      const kd = startCommand(t, [process.execPath, `${repoRoot}cmd/kube-dns/main.ts`, '-conf', join(dir, 'ours')], {}, 'kube-dns');
      await kd.waitFor(/initial sync done/, 20_000);
      const core = startCommand(t, [bin, '-conf', join(dir, 'theirs')], {}, 'coredns');
      await eventually(async () => (await dig(theirs, 'web.app.svc.cluster.local').catch(() => null))?.answer.length === 1, 'CoreDNS serving the cluster', 20_000);
      const [oursBefore, theirsBefore] = [kd.rawOutput().length, core.rawOutput().length];
      const answered = await compare(t, shape.questions, ours, theirs, shape.differences, shape.digArgs);
      if (shape.logged === true) {
        // A line is written a turn after its reply.
        await eventually(() => queryLines(kd.rawOutput().slice(oursBefore)).length >= queryLines(core.rawOutput().slice(theirsBefore)).length, 'kube-dns has written its query log lines', 5000);
        const [a, b] = [queryLines(kd.rawOutput().slice(oursBefore)), queryLines(core.rawOutput().slice(theirsBefore))];
        t.ok(b.length > 0 && b.length < shape.questions.length * 2, `CoreDNS logged some of the questions, not all (${b.length})`);
        t.same(a, b, 'the same query log lines (port, ID, time, RA and sizes aside)');
        for (const [question, size] of loggedReplySizes(kd.rawOutput().slice(oursBefore))) {
          t.equal(size, Number(/MSG SIZE\s+rcvd: (\d+)/.exec(answered.get(question)?.raw ?? '')?.[1]), `${question}: the reply size logged is the size dig received`);
        }
      }
      await Promise.all([kd.stop(), core.stop()]);
    });
  }
});
