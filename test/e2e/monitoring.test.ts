// The alerting rules and the dashboard against what the programs really export: the whole pod from
// manifests/kube-dns.yaml on a real kube-apiserver, every program scraped, every metric the alerting
// rules name found among them; and promtool's metrics lint on each program's /metrics, where only the
// original's names may be flagged.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { runPodLocally } from './harness/local-pod.ts';
import { only, readManifest, README_VALUES } from './harness/manifests.ts';
import { eventually } from '../helpers/eventually.ts';
import { repoRoot } from '../helpers/process.ts';
import { metricNames, promtoolBin, promtoolCanRun } from '../monitoring/promtool.ts';

/** Where each program serves /metrics in the manifest: kube-dns (PROMETHEUS_PORT), the nanny, the sidecar. */
const METRICS_PORTS = { 'kube-dns': 10055, 'dnsmasq-nanny': 10056, sidecar: 10054 };

t.test('the pod\'s /metrics: every metric the alerts and the dashboard name is exported; promtool\'s lint on each program', async (t) => {
  if (!e2eCanRun(t) || !promtoolCanRun(t)) return;
  const cluster = await startCluster(t);
  const deployment = only(readManifest('kube-dns.yaml', { ...README_VALUES, server: '10.0.0.10' }), 'Deployment', 'kube-dns');
  const pod = await runPodLocally(t, deployment.spec.template.spec, { kubeconfig: cluster.kubeconfig(cluster.kubeDnsToken) });
  const scrapes = new Map<string, string>();
  for (const [program, port] of Object.entries(METRICS_PORTS)) {
    const url = `http://127.0.0.1:${pod.port(port)}/metrics`;
    // The sidecar's probe metrics appear once it has probed.
    await eventually(async () => (await fetch(url).then((r) => r.text(), () => '')).includes('# TYPE'), `${program} /metrics`, 30_000);
    await eventually(async () => program !== 'sidecar' || /kubedns_probe_dnsmasq_up 1/.test(await (await fetch(url)).text()), 'the sidecar probed', 30_000);
    scrapes.set(program, await (await fetch(url)).text());
  }
  const exported = new Set<string>();
  for (const text of scrapes.values()) for (const m of text.matchAll(/^# TYPE (\S+) /gm)) exported.add(m[1]);

  const rules = parse(readFileSync(`${repoRoot}manifests/monitoring/alerts.yaml`, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  for (const rule of rules.groups.flatMap((g) => g.rules)) {
    for (const name of metricNames(rule.expr)) t.ok(exported.has(name), `${rule.alert}: ${name} is exported`);
  }
  const dashboard = JSON.parse(readFileSync(`${repoRoot}manifests/monitoring/dashboard.json`, 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  let exprs = 0;
  for (const panel of dashboard.panels) {
    for (const { expr } of panel.targets) {
      exprs++;
      // A histogram's series are its name with _bucket, _sum or _count.
      for (const name of metricNames(expr)) t.ok(exported.has(name.replace(/_(bucket|sum|count)$/, '')) || exported.has(name), `dashboard "${panel.title}": ${name} is exported`);
    }
  }
  t.ok(exprs >= 10, `the dashboard's ${exprs} expressions checked`);

  for (const [program, text] of scrapes) {
    const lint = await new Promise<string>((resolve) => {
      const child = execFile(promtoolBin(), ['check', 'metrics'], (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
      child.stdin!.end(text);
    });
    const findings = lint.split('\n').filter((l) => l.trim() !== '');
    t.comment(`promtool check metrics, ${program}: ${findings.length} finding(s)`);
    // Kept as they are: the original's names (dashboards read them).
    for (const f of findings) t.match(f, KEPT_NAMES, `${program}: ${f}`);
  }
});

/** Names promtool's lint flags that stay: the original sidecar's. */
const KEPT_NAMES = /^(kubedns_dnsmasq_(errors|evictions|hits|insertions|max_size|misses)|kubedns_probe_\w+_(errors|latency_ms)) /;
