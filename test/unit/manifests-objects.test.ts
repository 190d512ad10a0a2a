// The shipped manifests, read statically: every file parses, the placeholders are the documented ones and
// the README's sed line replaces them all, the objects refer to each other by the right names, RBAC is
// read-only and no broader than what kube-dns reads, and the images are the ones our Dockerfiles build.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../helpers/process.ts';
import { manifestFiles, manifestText, only, PLACEHOLDER, RBAC_MANIFESTS, README_VALUES, readManifest, RUNTIME_PILLARS, substitute } from '../e2e/harness/manifests.ts';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const clusterScoped = new Set(['ClusterRole', 'ClusterRoleBinding', 'Namespace', 'PriorityClass']);
const files = manifestFiles();
const all = new Map(files.map((f) => [f, readManifest(f, README_VALUES)]));
const objects = [...all.values()].flat();
const kubeDns = all.get('kube-dns.yaml')!;
const deployment = only(kubeDns, 'Deployment', 'kube-dns');
const podLabels: Record<string, string> = deployment.spec.template.metadata.labels;

const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

t.test('the files', async (t) => {
  t.same(files, ['kube-dns.yaml', 'optional/autoscaler.yaml', 'optional/node-local-dns.yaml', 'optional/rbac-endpoints.yaml', 'optional/rbac-service-entries.yaml', 'rbac.yaml']);
  for (const f of RBAC_MANIFESTS) t.ok(files.includes(f), `the e2e harness's RBAC file ${f} is shipped`);
  for (const [file, objs] of all) {
    t.ok(objs.length > 0, `${file} has objects`);
    for (const o of objs) {
      const what = `${file}: ${o.kind} ${o.metadata?.name}`;
      t.ok(o.apiVersion && o.kind && o.metadata?.name, `${what} has apiVersion, kind and name`);
      if (clusterScoped.has(o.kind)) t.notOk(o.metadata.namespace, `${what} is cluster-scoped`);
      else t.equal(o.metadata.namespace, 'kube-system', `${what} is in kube-system`);
      t.match(o.metadata.labels?.['k8s-app'], /^(kube-dns(-autoscaler)?|node-local-dns)$/, `${what} is labelled k8s-app`);
    }
  }
  const names = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  t.same(names.filter((n, i) => names.indexOf(n) !== i), [], 'no object is defined twice');
});

/** The placeholders each file has: the original's in kube-dns.yaml, upstream's pillars in node-local-dns.yaml. */
const PLACEHOLDERS: Record<string, string[]> = {
  'kube-dns.yaml': ['__DNS__DOMAIN__', '__DNS__MEMORY__LIMIT__', '__DNS__SERVER__'],
  'optional/node-local-dns.yaml': ['__PILLAR__CLUSTER__DNS__', '__PILLAR__DNS__DOMAIN__', '__PILLAR__DNS__SERVER__', '__PILLAR__LOCAL__DNS__', '__PILLAR__UPSTREAM__SERVERS__'],
};

t.test("placeholders: the original's and upstream's, each replaced by the README's sed line for its file", async (t) => {
  for (const f of files) {
    const found = [...new Set(manifestText(f).match(PLACEHOLDER) ?? [])].sort();
    t.same(found, PLACEHOLDERS[f] ?? [], f);
  }
  const readme = readFileSync(join(repoRoot, 'manifests', 'README.md'), 'utf8');
  for (const file of Object.keys(PLACEHOLDERS)) {
    const line = readme.split('\n').find((l) => l.startsWith('sed ') && l.includes(`manifests/${file} `));
    t.ok(line, `the README has a sed line for ${file}`);
    const [sed, apply] = line!.split(' | ');
    t.equal(apply, 'kubectl apply -f -', 'it pipes into kubectl apply');
    const out = execFileSync('bash', ['-c', sed], { cwd: repoRoot, encoding: 'utf8' });
    t.same([...new Set(out.match(PLACEHOLDER) ?? [])].sort(), file.endsWith('node-local-dns.yaml') ? RUNTIME_PILLARS : [], 'no placeholder survives it but the ones node-cache fills in');
    t.equal(out, substitute(manifestText(file), README_VALUES), 'the values it uses are README_VALUES');
  }
  const unreplaced = parseAllDocuments(manifestText('kube-dns.yaml')).map((d) => d.toJS());
  t.equal(only(unreplaced, 'Service').spec.clusterIP, '__DNS__SERVER__', 'unreplaced, the cluster IP is not an IP (the API server refuses it)');
});

t.test('the Service sends port 53 to the dnsmasq container of the Deployment\'s pods', async (t) => {
  const svc = only(kubeDns, 'Service', 'kube-dns');
  t.equal(svc.spec.clusterIP, README_VALUES.server);
  t.ok(selects(svc.spec.selector, podLabels), 'its selector matches the pod template labels');
  t.same(svc.spec.ports.map((p: any) => [p.name, p.port, p.protocol, p.targetPort ?? p.port]), [['dns', 53, 'UDP', 53], ['dns-tcp', 53, 'TCP', 53]]);
  const dnsmasq = deployment.spec.template.spec.containers.find((c: any) => c.name === 'dnsmasq');
  for (const p of svc.spec.ports) {
    t.ok(dnsmasq.ports.some((cp: any) => cp.containerPort === (p.targetPort ?? p.port) && cp.protocol === p.protocol), `${p.name} reaches a dnsmasq containerPort`);
  }
});

t.test("node-cache's kube-dns-upstream sends port 53 to kube-dns itself (10053), which trusts the pod address node-cache names", async (t) => {
  const svc = only(all.get('optional/node-local-dns.yaml')!, 'Service', 'kube-dns-upstream');
  t.ok(selects(svc.spec.selector, podLabels), "its selector matches the kube-dns Deployment's pods");
  const kubedns = deployment.spec.template.spec.containers.find((c: any) => c.name === 'kubedns');
  for (const p of svc.spec.ports) {
    t.equal(p.targetPort, 10053, `${p.name}: kube-dns's port, not the pod's dnscache (which would name the node instead)`);
    t.ok(kubedns.ports.some((cp: any) => cp.containerPort === p.targetPort && cp.protocol === p.protocol), `${p.name} reaches a kubedns containerPort`);
  }
});

t.test('the Deployment, its PodDisruptionBudget and the ConfigMap fit together', async (t) => {
  t.ok(selects(deployment.spec.selector.matchLabels, podLabels), 'Deployment selector matches its pods');
  const pdb = only(kubeDns, 'PodDisruptionBudget', 'kube-dns');
  t.ok(selects(pdb.spec.selector.matchLabels, podLabels), 'PDB selects the pods');
  t.equal(pdb.spec.maxUnavailable, 1);
  t.ok(deployment.spec.replicas >= 2, 'at least two replicas');
  t.same(deployment.spec.strategy.rollingUpdate, { maxSurge: '10%', maxUnavailable: 0 }, 'the original\'s rollout: never below the replica count');
  const term = deployment.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
  t.equal(term.topologyKey, 'kubernetes.io/hostname');
  const expr = term.labelSelector.matchExpressions[0];
  t.ok(expr.operator === 'In' && expr.values.includes(podLabels[expr.key]), 'anti-affinity keeps the pods apart from each other');
  const cm = only(kubeDns, 'ConfigMap', 'kube-dns');
  t.notOk('data' in cm, 'no data: re-applying never wipes keys an operator added');
  const volume = deployment.spec.template.spec.volumes.find((v: any) => v.configMap);
  t.same(volume.configMap, { name: 'kube-dns', optional: true }, 'the pod mounts that ConfigMap, optional as in the original');
});

t.test('identity: the pod runs as the ServiceAccount the RBAC binds', async (t) => {
  const rbac = RBAC_MANIFESTS.flatMap((f) => all.get(f)!);
  const sa = only(rbac, 'ServiceAccount');
  t.equal(deployment.spec.template.spec.serviceAccountName, sa.metadata.name);
  for (const b of rbac.filter((o) => o.kind.endsWith('Binding'))) {
    t.same(b.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }], `${b.kind} ${b.metadata.name} binds only it`);
    t.ok(rbac.some((r) => r.kind === b.roleRef.kind && r.metadata.name === b.roleRef.name && r.metadata.namespace === b.metadata.namespace), `${b.kind} ${b.metadata.name} refers to a shipped ${b.roleRef.kind}`);
  }
});

t.test('RBAC: read-only, named resources, and each optional mode in its own file', async (t) => {
  const rules = (file: string) => all.get(file)!.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role').map((r) => [r.kind, r.metadata.name, r.rules]);
  t.same(rules('rbac.yaml'), [
    ['ClusterRole', 'system:kube-dns', [
      { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
    ]],
    ['Role', 'system:kube-dns', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['kube-dns'], verbs: ['get', 'list', 'watch'] }]],
  ], 'the default mode: Services, EndpointSlices, Pods and Nodes (--autopath, federations), its own ConfigMap');
  t.same(rules('optional/rbac-endpoints.yaml'), [['ClusterRole', 'system:kube-dns:endpoints', [{ apiGroups: [''], resources: ['endpoints'], verbs: ['list', 'watch'] }]]]);
  t.same(rules('optional/rbac-service-entries.yaml'), [['ClusterRole', 'system:kube-dns:service-entries', [{ apiGroups: ['networking.istio.io'], resources: ['serviceentries'], verbs: ['list', 'watch'] }]]]);
  for (const o of objects.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
    for (const r of o.rules) {
      t.notOk([...r.apiGroups, ...r.resources, ...r.verbs].includes('*'), `${o.metadata.name}: no wildcard`);
    }
  }
});

t.test('the autoscaler targets this Deployment with its own ConfigMap, by name', async (t) => {
  const auto = all.get('optional/autoscaler.yaml')!;
  const d = only(auto, 'Deployment', 'kube-dns-autoscaler');
  const args: string[] = d.spec.template.spec.containers[0].args;
  const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  t.equal(arg('target'), `deployment/${deployment.metadata.name}`);
  t.equal(arg('namespace'), deployment.metadata.namespace);
  const cm = only(auto, 'ConfigMap', arg('configmap'));
  const linear = JSON.parse(cm.data.linear);
  t.ok(linear.coresPerReplica > 0 && linear.nodesPerReplica > 0, 'linear parameters parse');
  const role = only(auto, 'Role');
  t.same(role.rules, [
    { apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: [deployment.metadata.name], verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: [cm.metadata.name], verbs: ['get'] },
  ], 'it may scale only kube-dns and read only its parameters');
  t.equal(d.spec.template.spec.serviceAccountName, only(auto, 'ServiceAccount').metadata.name);
  t.equal(d.spec.template.spec.priorityClassName, 'system-cluster-critical');
});

t.test('images: ours, tagged with package.json\'s version, named after the bin they run', async (t) => {
  const nodeLocal = only(all.get('optional/node-local-dns.yaml')!, 'DaemonSet', 'node-local-dns');
  for (const c of [...deployment.spec.template.spec.containers, ...nodeLocal.spec.template.spec.containers] as { name: string; image: string }[]) {
    const m = /^kube-dns-ts\/([a-z-]+):(.+)$/.exec(c.image);
    t.ok(m, `${c.name}: ${c.image} is one of ours`);
    t.equal(m![2], pkg.version, `${c.name}: tag is the package version`);
    t.ok(m![1] in pkg.bin, `${c.name}: ${m![1]} is a bin in package.json`);
  }
});
