// Kubernetes' own DNS tests against the addon: every `[sig-network] DNS` spec of e2e.test v1.36.3 that
// runs without a cloud and is neither [Serial] nor [Disruptive] (16: the 8 Conformance ones, 7 more,
// and one of a Beta feature gate on by default), on a real single-node cluster with the addon from
// manifests/ as the README deploys it.

import t from 'tap';
import { clusterCanRun, startNodeCluster } from './harness/cluster.ts';
import { deployAddon } from './harness/addon.ts';
import { runE2eSpecs } from './harness/e2e-specs.ts';

// A cluster takes minutes and runs one at a time (the harness's lock): past tap's per-file timeout.
t.setTimeout(25 * 60_000);

const FOCUS = '\\[sig-network\\] DNS';
const SKIP = 'Provider:GCE|\\[Serial\\]|\\[Disruptive\\]|\\[Feature:';

t.test("every [sig-network] DNS spec of Kubernetes' e2e suite passes against the addon", async (t) => {
  if (!clusterCanRun(t)) return;
  const c = await startNodeCluster(t, { proxyMode: 'iptables' });
  await deployAddon(c);
  const specs = await runE2eSpecs(c, FOCUS, SKIP);
  // The 15 that need no cloud and no feature gate, and one of a Beta gate that is on by default
  // (RelaxedServiceNameValidation: a Service name that starts with a digit).
  t.equal(specs.length, 16, `16 specs ran (${specs.length})`);
  t.equal(specs.filter((s) => s.name.includes('[Conformance]')).length, 8, 'the 8 Conformance specs among them');
  for (const s of specs) t.equal(s.state, 'passed', `${s.name} (${s.seconds.toFixed(0)} s)${s.failure ? `\n${s.failure}` : ''}`);
});
