// node-cache's Corefile: the upstream template's text parsed, its pillars filled in as the original
// node-cache fills them, the kube-dns ConfigMap merged in, and the result planned into what is served;
// every line it cannot serve is an error naming the line.

import t from 'tap';
import { emptyConfig, parseConfig } from '../../pkg/config/config.ts';
import { parseCorefile } from '../../pkg/corefile/read.ts';
import { CorefileError } from '../../pkg/corefile/errors.ts';
import { planCorefile } from '../../pkg/nodecache/plan.ts';
import { cachePolicy } from '../../pkg/corefile/plugins/cache.ts';
import type { PlanContext } from '../../pkg/nodecache/plan.ts';
import { renderCorefile, serviceHostEnv } from '../../pkg/nodecache/template.ts';
import { nodeLocalCorefile } from '../e2e/harness/manifests.ts';
import type { TemplateValues } from '../../pkg/nodecache/template.ts';

/** Kubernetes' nodelocaldns.yaml Corefile (our manifest ships it unchanged) with the operator's three pillars replaced as its docs say. */
const BASE = nodeLocalCorefile();

const values = (config = emptyConfig()): TemplateValues => ({ clusterDns: '10.96.100.7', resolvServers: ['10.200.0.1'], localIps: ['169.254.20.10', '10.96.0.10'], port: 53, config });
const ctx: PlanContext = { defaultPort: 53, resolvServers: () => [{ host: '10.200.0.1', port: 53 }] };
const plan = (text: string) => planCorefile(parseCorefile(text), ctx);

/** The error a Corefile gets, as code and message. */
function refusal(text: string): { code: string; message: string } {
  try {
    plan(text);
  } catch (err) {
    if (err instanceof CorefileError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('planned without an error');
}

t.test('the template, rendered: the upstream Service ClusterIP and resolv.conf servers in their pillars', async (t) => {
  const r = renderCorefile(BASE, values());
  t.same(r.skipped, []);
  t.equal(r.text.match(/forward \. 10\.96\.100\.7 \{/g)?.length, 3, 'the cluster zones forward to kube-dns-upstream');
  t.match(r.text, /forward \. 10\.200\.0\.1\n/, "the root to the node's resolv.conf servers");
  t.equal(serviceHostEnv('kube-dns-upstream'), 'KUBE_DNS_UPSTREAM_SERVICE_HOST');
});

t.test('the template, planned: four zones on both addresses, the cache and forward settings as written', async (t) => {
  const p = plan(renderCorefile(BASE, values()).text);
  t.same(p.zones.map((z) => [z.zone, z.port, z.bind, z.forwarding.forceTcp, z.upstreams.map((u) => `${u.host}:${u.port}`)]), [
    ['cluster.local', 53, ['169.254.20.10', '10.96.0.10'], true, ['10.96.100.7:53']],
    ['in-addr.arpa', 53, ['169.254.20.10', '10.96.0.10'], true, ['10.96.100.7:53']],
    ['ip6.arpa', 53, ['169.254.20.10', '10.96.0.10'], true, ['10.96.100.7:53']],
    ['', 53, ['169.254.20.10', '10.96.0.10'], false, ['10.200.0.1:53']],
  ]);
  t.same(p.zones[0].cache, { successCapacity: 9984, successTtl: 30, successMinTtl: 5, denialCapacity: 9984, denialTtl: 5, denialMinTtl: 5, staleS: 0, staleMode: 'immediate', staleTtl: 30, zones: null, disable: { success: [], denial: [] }, bypass: [], prefetch: null }, 'success 9984 30, denial 9984 5');
  t.same(p.zones[1].cache, { successCapacity: 9984, successTtl: 30, successMinTtl: 5, denialCapacity: 9984, denialTtl: 30, denialMinTtl: 5, staleS: 0, staleMode: 'immediate', staleTtl: 30, zones: null, disable: { success: [], denial: [] }, bypass: [], prefetch: null }, 'cache 30 caps both');
  t.ok(p.zones.every((z) => z.logErrors && z.loopDetect && z.log.length === 0), 'errors and loop everywhere, no log');
  t.equal(p.metrics, ':9253');
  t.equal(p.health, '169.254.20.10:8080');
});

t.test('the kube-dns ConfigMap: stubDomains become blocks of their own, upstreamNameservers replace resolv.conf', async (t) => {
  const config = parseConfig({ stubDomains: '{"acme.local": ["1.2.3.4", "1.2.3.5:5353"], "corp.example": ["ns.corp.example"]}', upstreamNameservers: '["8.8.8.8"]' });
  const r = renderCorefile(BASE, values(config));
  t.same(r.skipped, ['stubDomains corp.example: ns.corp.example is not an IP address'], 'a name is left out, and said so');
  t.match(r.text, /acme\.local:53 \{\n {4}errors\n {4}cache 30\n {4}bind 169\.254\.20\.10 10\.96\.0\.10\n {4}forward \. 1\.2\.3\.4 1\.2\.3\.5:5353\n\}\n/);
  const p = plan(r.text);
  t.same(p.zones.find((z) => z.zone === 'acme.local')?.upstreams, [{ host: '1.2.3.4', port: 53 }, { host: '1.2.3.5', port: 5353 }]);
  t.same(p.zones.find((z) => z.zone === '')?.upstreams, [{ host: '8.8.8.8', port: 53 }]);
  t.notOk(p.zones.some((z) => z.zone === 'corp.example'));
});

t.test('a pillar left over is an error naming its line', async (t) => {
  t.throws(() => renderCorefile(BASE.replace('bind 169.254.20.10 10.96.0.10', 'bind __PILLAR__LOCAL__DNS__'), values()), { code: 'COREFILE_INVALID', line: 9, message: /__PILLAR__LOCAL__DNS__ is not replaced/ });
});

t.test('forward to a resolv.conf path, its except, serve_stale and prefetch', async (t) => {
  const p = plan('.:53 {\n  cache 30 {\n    serve_stale 10m\n  }\n  forward . /etc/resolv.conf {\n    except Example.org. corp.internal\n  }\n}\n');
  t.same(p.zones[0].upstreams, [{ host: '10.200.0.1', port: 53 }]);
  t.same(p.zones[0].except, ['example.org', 'corp.internal']);
  const zoned = plan('.:53 {\n  cache 30 Example.org. corp.internal {\n    disable denial corp.internal\n  }\n  forward . 1.1.1.1\n}\n').zones[0].cache;
  t.match(zoned, { successTtl: 30, zones: ['example.org', 'corp.internal'], disable: { success: [], denial: ['corp.internal'] } }, 'cache ZONES: the only zones kept');
  t.match(cachePolicy(zoned), { zones: ['example.org', 'corp.internal'], disableSuccess: undefined, disableDenial: ['corp.internal'] });
  t.equal(p.zones[0].cache?.staleS, 600);
  t.equal(plan('.:53 {\n  cache {\n    serve_stale\n  }\n  forward . 1.1.1.1\n}').zones[0].cache?.staleS, 3600, "CoreDNS's default hour");
  const stale = (line: string) => plan(`.:53 {\n  cache {\n    ${line}\n  }\n  forward . 1.1.1.1\n}`).zones[0].cache;
  t.match(stale('serve_stale'), { staleMode: 'immediate', staleTtl: 30 }, "CoreDNS's mode unsaid, RFC 8767's TTL (CoreDNS's 0 breaks it)");
  t.match(stale('serve_stale 10m verify'), { staleS: 600, staleMode: 'verify', staleTtl: 30 });
  t.match(stale('serve_stale 1h immediate 10s 0'), { staleMode: 'immediate', staleTtl: 10 });
  t.match(stale('serve_stale 1h verify 0 0s'), { staleMode: 'verify', staleTtl: 0 });
  const refused: [string, RegExp][] = [
    ['serve_stale 1h verify 100ms', /VERIFY_TIMEOUT above 0 .* is not served/],
    ['serve_stale 1h immediate 30s 30s', /FAILURE_RECHECK above 0 is not served/],
    ['serve_stale 1h later', /the mode is immediate or verify, not "later"/],
    ['serve_stale 1h immediate 1500ms', /RESPONSE_TTL must be whole seconds/],
    ['serve_stale 1h immediate 30s 0 0', /too many arguments/],
  ];
  for (const [line, message] of refused) t.throws(() => stale(line), { message }, line);
  t.same(stale('prefetch 10')?.prefetch, { amount: 10, windowS: 60, percent: 10 }, "prefetch: CoreDNS's minute and 10% unsaid");
  t.same(stale('prefetch 5 1500ms 30%')?.prefetch, { amount: 5, windowS: 2, percent: 30 }, 'DURATION in whole seconds, rounded up');
  t.equal(stale('prefetch 0')?.prefetch, null, 'AMOUNT 0: none, as CoreDNS');
  t.same(cachePolicy(stale('prefetch 3 2m 90%')).prefetch, { amount: 3, windowS: 120, percent: 90 }, 'handed to the cache policy');
});

t.test('what node-cache does not serve is an error at the line, never ignored', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['.:53 {\n  forward . 1.1.1.1\n  kubernetes cluster.local\n}', 'COREFILE_UNSUPPORTED', /^Corefile line 3: the plugin `kubernetes` is not served by node-cache \(it serves: reload, bufsize, bind, health, prometheus, errors, log, any, chaos, rewrite, cache, template, hosts, file, loop, forward\)/],
    ['.:53 {\n  forward . 1.1.1.1 {\n    health_check 1s no_rec\n  }\n}', 'COREFILE_UNSUPPORTED', /^Corefile line 3: forward option `health_check 1s no_rec`/],
    ['.:53 {\n  cache 30 {\n    keepttl\n  }\n  forward . 1.1.1.1\n}', 'COREFILE_UNSUPPORTED', /^Corefile line 3: cache option `keepttl`/],
    ['.:53 {\n  cache 30 {\n    prefetch 10 1m 5%\n  }\n  forward . 1.1.1.1\n}', 'COREFILE_INVALID', /^Corefile line 3: prefetch: PERCENTAGE must be 10% to 90%, not 5%/],
    ['.:53 {\n  cache 30 {\n    prefetch 10 1m 50\n  }\n  forward . 1.1.1.1\n}', 'COREFILE_INVALID', /^Corefile line 3: prefetch: PERCENTAGE is a whole number with its % sign/],
    ['.:53 {\n  cache 30 {\n    prefetch -1\n  }\n  forward . 1.1.1.1\n}', 'COREFILE_INVALID', /^Corefile line 3: prefetch: AMOUNT/],
    ['.:53 {\n  cache 30s\n  forward . 1.1.1.1\n}', 'COREFILE_INVALID', /^Corefile line 2: cache: "30s" would be a zone: the TTL is whole seconds/],
    ['.:53 {\n  forward . somehost\n}', 'COREFILE_INVALID', /^Corefile line 2: forward: "somehost" is not ip\[:port\]/],
    ['.:53 {\n  bind eth0\n  forward . 1.1.1.1\n}', 'COREFILE_INVALID', /^Corefile line 2: bind: "eth0" is not an IP address/],
    ['.:53 {\n  errors\n}', 'COREFILE_INVALID', /^Corefile line 1: the block of \. has no forward/],
    ['.:53 {\n  forward . 1.1.1.1\n}\n.:53 {\n  forward . 1.1.1.1\n}', 'COREFILE_INVALID', /^Corefile line 4: zone \. on port 53 has a server block already/],
    ['.:53 {\n  forward . 1.1.1.1\n  prometheus :9253\n}\nx:53 {\n  forward . 1.1.1.1\n  prometheus :9300\n}', 'COREFILE_UNSUPPORTED', /^Corefile line 7: a second prometheus address \(:9300; :9253 is already served\)/],
    ['.:53 {\n  forward . 1.1.1.1\n', 'COREFILE_SYNTAX', /^Corefile line 1: the `\{` opened here is never closed/],
    ['.:53 {\n  forward . 1.1.1.1\n}\n}', 'COREFILE_SYNTAX', /^Corefile line 4: a `\}` closes nothing/],
    ['.:53\n', 'COREFILE_INVALID', /^Corefile line 1: the block of \. has no forward/],
    ['tls://.:853 {\n  forward . 1.1.1.1\n}', 'COREFILE_UNSUPPORTED', /^Corefile line 1: server block key "tls:\/\/\.:853"/],
    ['.:53 {\n  forward example.org 1.1.1.1\n}', 'COREFILE_UNSUPPORTED', /^Corefile line 2: forward for example.org inside the block of \./],
  ];
  for (const [text, code, message] of cases) {
    const r = refusal(text);
    t.equal(r.code, code, text);
    t.match(r.message, message, text);
  }
});

t.test('comments and several keys per block', async (t) => {
  const p = plan('# the root\nexample.org:1053 example.net { # two zones\n  forward . 1.1.1.1:5353 # upstream\n}\n');
  t.same(p.zones.map((z) => [z.zone, z.port]), [['example.org', 1053], ['example.net', 53]]);
  t.same(p.zones[1].upstreams, [{ host: '1.1.1.1', port: 5353 }]);
});

t.test('a brace glued to a key is refused at its line (CoreDNS serves a zone named "example.net{")', async (t) => {
  t.throws(() => plan('example.org:1053 example.net{\n  forward . 1.1.1.1\n}\n'), { code: 'COREFILE_SYNTAX', message: /^Corefile line 1: server block key "example\.net\{": a brace must stand apart/ });
});
