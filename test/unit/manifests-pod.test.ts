// The kube-dns pod template, read statically: every container's securityContext, and its args, ports and
// probes checked against the programs' own flag definitions (the same parsers the programs run), so a
// port or flag that drifts in cmd/*/flags.ts or in the manifest fails here.

import t from 'tap';
import { dnsmasqFlagsOf, kubednsFlagsOf, sidecarFlagsOf } from '../e2e/harness/pod-args.ts';
import { only, README_VALUES, readManifest } from '../e2e/harness/manifests.ts';
import { kubeDnsFlags } from '../../cmd/kube-dns/flags.ts';
import { DNSCACHE_ENTRY, nannyFlags } from '../../cmd/dnsmasq-nanny/flags.ts';
import { sidecarFlags } from '../../cmd/sidecar/flags.ts';
import { defaultConfig } from '../../pkg/dnscache/args.ts';

const kubeDns = readManifest('kube-dns.yaml', README_VALUES);
const pod = only(kubeDns, 'Deployment', 'kube-dns').spec.template.spec;
const autoscalerPod = only(readManifest('optional/autoscaler.yaml'), 'Deployment').spec.template.spec;
const container = (name: string) => pod.containers.find((c: any) => c.name === name);
const portNamed = (c: any, name: string) => c.ports.find((p: any) => p.name === name)?.containerPort;
const domain = README_VALUES.domain;

t.test('pod: critical, spread, its own DNS upstream, hardened', async (t) => {
  t.same(pod.containers.map((c: any) => c.name), ['kubedns', 'dnsmasq', 'sidecar']);
  t.equal(pod.priorityClassName, 'system-cluster-critical');
  t.equal(pod.dnsPolicy, 'Default', 'upstreams from the node, not from cluster DNS (itself)');
  t.same(pod.tolerations, [{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
  t.ok(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.length > 0, 'preferred anti-affinity');
  t.same(pod.nodeSelector, { 'kubernetes.io/os': 'linux' });
});

t.test('every container: non-root, no privilege escalation, read-only root, all capabilities dropped', async (t) => {
  for (const [what, spec] of [['kube-dns', pod], ['autoscaler', autoscalerPod]] as const) {
    t.equal(spec.securityContext.seccompProfile.type, 'RuntimeDefault', `${what}: seccomp RuntimeDefault`);
    for (const c of spec.containers) {
      const sc = c.securityContext ?? {};
      const runAsNonRoot = sc.runAsNonRoot ?? spec.securityContext.runAsNonRoot;
      const uid = sc.runAsUser ?? spec.securityContext.runAsUser;
      t.equal(runAsNonRoot, true, `${c.name}: runAsNonRoot`);
      t.ok(uid > 0, `${c.name}: runs as uid ${uid}`);
      t.equal(sc.allowPrivilegeEscalation, false, `${c.name}: allowPrivilegeEscalation false`);
      t.equal(sc.readOnlyRootFilesystem, true, `${c.name}: read-only root filesystem`);
      t.same(sc.capabilities?.drop, ['ALL'], `${c.name}: drops ALL`);
      // Our images' one node carries NET_BIND_SERVICE as a file capability (dnscache's port 53, CoreDNS's given -conf): the kernel runs it only where it may be held; the autoscaler's image is not ours.
      const ours = what === 'kube-dns';
      t.same(sc.capabilities?.add ?? [], ours ? ['NET_BIND_SERVICE'] : [], `${c.name}: adds ${ours ? 'only NET_BIND_SERVICE' : 'nothing'}`);
      t.ok(c.resources?.requests?.cpu && c.resources?.requests?.memory, `${c.name}: requests cpu and memory`);
    }
  }
  t.equal(container('kubedns').resources.limits.memory, README_VALUES.memoryLimit, 'the kubedns memory limit is the placeholder');
});

t.test('ports: unique names, and every probe aims at a port a container declares', async (t) => {
  const ports = pod.containers.flatMap((c: any) => c.ports.map((p: any) => ({ ...p, container: c.name })));
  const names = ports.map((p: any) => p.name);
  t.same(names.filter((n: string, i: number) => names.indexOf(n) !== i), [], 'no port name twice in the pod');
  for (const c of pod.containers) {
    for (const kind of ['livenessProbe', 'readinessProbe']) {
      const probe = c[kind]?.httpGet;
      if (!probe) continue;
      t.ok(ports.some((p: any) => p.containerPort === probe.port && p.protocol === 'TCP'), `${c.name} ${kind} :${probe.port}${probe.path} is a declared TCP port`);
    }
  }
  t.ok(container('kubedns').readinessProbe, 'kube-dns has a readiness probe');
  for (const c of pod.containers) t.ok(c.livenessProbe, `${c.name} has a liveness probe`);
});

t.test('kubedns: its args parse with kube-dns\'s flags and agree with its ports and mounts', async (t) => {
  const c = container('kubedns');
  const f = kubednsFlagsOf(c.args);
  t.equal(f.domain, `${domain}.`);
  t.equal(f['dns-port'], portNamed(c, 'dns-local'), '--dns-port is the dns-local UDP port');
  t.equal(f['dns-port'], portNamed(c, 'dns-tcp-local'), 'and the TCP one');
  t.equal(f['healthz-port'], kubeDnsFlags['healthz-port'].default, '--healthz-port left at its default');
  t.equal(f['healthz-port'], portNamed(c, 'healthz'), 'which is the healthz port');
  t.equal(c.readinessProbe.httpGet.port, f['healthz-port'], 'readiness is on --healthz-port');
  t.equal(c.readinessProbe.httpGet.path, '/readiness');
  t.same(c.env, [{ name: 'PROMETHEUS_PORT', value: String(portNamed(c, 'kubedns-metrics')) }], 'PROMETHEUS_PORT is the kubedns-metrics port');
  t.ok(c.volumeMounts.some((m: any) => m.mountPath === f['config-dir'] && m.name === 'kube-dns-config'), '--config-dir is where the ConfigMap is mounted');
  t.equal(f['config-map'], '', 'no --config-map: the volume is the config source');
  t.equal(f['endpoints-api'], 'endpointslices', 'EndpointSlices: manifests/rbac.yaml is enough');
  t.equal(f.federations, '', 'no federations: no Node access needed');
});

t.test('dnsmasq: the nanny\'s args and dnscache\'s (after --) parse, and route the domain to kube-dns', async (t) => {
  const c = container('dnsmasq');
  const kubednsPort = kubednsFlagsOf(container('kubedns').args)['dns-port'];
  const { nanny, dnscache } = dnsmasqFlagsOf(c.args);
  t.equal(nanny.dnsmasqExec, DNSCACHE_ENTRY, 'the child is our dnscache (the default -dnsmasqExec)');
  t.match(DNSCACHE_ENTRY, /cmd\/dnscache\/main\.(ts|js)$/);
  t.equal(nanny.restartDnsmasq, true);
  t.ok(c.volumeMounts.some((m: any) => m.mountPath === nanny.configDir && m.name === 'kube-dns-config'), '-configDir is where the ConfigMap is mounted');
  t.ok(c.volumeMounts.some((m: any) => m.mountPath === '/tmp' && pod.volumes.find((v: any) => v.name === m.name)?.emptyDir), 'an emptyDir on /tmp for the servers-file (os.tmpdir())');
  t.equal(nanny.kubednsServer, nannyFlags.kubednsServer.default, '-kubednsServer left at its default');
  t.equal(nanny.kubednsServer, `127.0.0.1:${kubednsPort}`, 'which is kube-dns\'s --dns-port');
  t.equal(nanny.metricsAddress, nannyFlags.metricsAddress.default, '-metricsAddress left at its default');
  t.equal(Number(nanny.metricsAddress.split(':').pop()), portNamed(c, 'nanny-metrics'), 'which is the nanny-metrics port');
  t.equal(dnscache.port, defaultConfig().port, 'dnscache\'s --port left at its default');
  t.equal(dnscache.port, portNamed(c, 'dns'), 'which is the dns UDP port');
  t.equal(dnscache.port, portNamed(c, 'dns-tcp'), 'and the TCP one');
  t.same(dnscache.stubs.map((s) => [s.domain, `${s.server.host}#${s.server.port}`]), [domain, 'in-addr.arpa', 'ip6.arpa'].map((d) => [d, `127.0.0.1#${kubednsPort}`]), 'the cluster domain and reverse zones go to kube-dns');
  t.equal(dnscache.cacheSize, 1000);
  t.equal(dnscache.noNegcache, true);
  t.equal(dnscache.dnsLoopDetect, true);
  t.equal(c.livenessProbe.httpGet.path, '/healthcheck/dnsmasq');
});

t.test('sidecar: its probes ask kube-dns and dnscache where they listen, and back the liveness checks', async (t) => {
  const c = container('sidecar');
  const f = sidecarFlagsOf(c.args);
  const kubednsPort = kubednsFlagsOf(container('kubedns').args)['dns-port'];
  const dnscachePort = dnsmasqFlagsOf(container('dnsmasq').args).dnscache.port;
  t.equal(f['prometheus-port'], sidecarFlags['prometheus-port'].default, '--prometheus-port left at its default');
  t.equal(f['prometheus-port'], portNamed(c, 'metrics'), 'which is the metrics port');
  t.same(f.probes.map((p) => [p.label, `${p.server.host}:${p.server.port}`, p.name, p.intervalMs, p.typeName]), [
    ['kubedns', `127.0.0.1:${kubednsPort}`, `kubernetes.default.svc.${domain}.`, 5000, 'SRV'],
    ['dnsmasq', `127.0.0.1:${dnscachePort}`, `kubernetes.default.svc.${domain}.`, 5000, 'SRV'],
  ]);
  const labels = new Set(f.probes.map((p) => p.label));
  for (const other of pod.containers) {
    const probe = other.livenessProbe.httpGet;
    t.equal(probe.port, f['prometheus-port'], `${other.name}'s liveness is served by the sidecar`);
    const m = /^\/healthcheck\/(\w+)$/.exec(probe.path);
    if (m) t.ok(labels.has(m[1]), `${other.name}: /healthcheck/${m[1]} is one of the sidecar's --probe labels`);
    else t.equal(probe.path, f['prometheus-path'], `${other.name}: the sidecar's metrics path`);
  }
  t.equal(pod.containers.find((x: any) => x.name === 'kubedns') && only(kubeDns, 'Deployment').spec.template.metadata.annotations['prometheus.io/port'], String(f['prometheus-port']), 'prometheus.io/port is the sidecar\'s');
});

t.test('rollouts: every container unready within a second of SIGTERM, lame ducks that agree, a grace period past them', async (t) => {
  const kubedns = kubednsFlagsOf(container('kubedns').args);
  const { nanny } = dnsmasqFlagsOf(container('dnsmasq').args);
  const sidecar = sidecarFlagsOf(container('sidecar').args);
  for (const name of ['kubedns', 'dnsmasq']) {
    const probe = container(name).readinessProbe;
    t.ok(probe, `${name} has a readiness probe`);
    t.equal((probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3), 1, `${name}: unready at the first probe after SIGTERM, within a second`);
  }
  t.equal(container('dnsmasq').readinessProbe.httpGet.path, '/readiness', "the nanny's /readiness");
  t.equal(container('dnsmasq').readinessProbe.httpGet.port, Number(nanny.metricsAddress.split(':').pop()), 'on -metricsAddress');
  t.ok(nanny.lameduck >= 5000, `the dnsmasq container answers ${nanny.lameduck} ms after SIGTERM (at least 5 s: kube-proxy's syncs)`);
  t.ok(kubedns.lameduck > nanny.lameduck, 'kube-dns outlives the cache that forwards to it');
  t.equal(sidecar.lameduck, kubedns.lameduck, 'the sidecar probes as long as kube-dns answers');
  const grace = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
  t.ok(grace >= Math.max(kubedns.lameduck, nanny.lameduck, sidecar.lameduck) + 5000, `SIGKILL (${grace} ms) comes well after every lame duck and drain`);
});
