// Kubernetes' own e2e specs (e2e.test, built from the release's module) run against a NodeCluster, with
// a JSON report read back spec by spec.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { k8sBin } from '../../e2e/harness/binaries.ts';
import type { NodeCluster } from './cluster.ts';
import { NET } from './node-config.ts';

export interface SpecResult {
  /** The spec's full text: its containers' texts and its own, e.g. `[sig-network] DNS should provide DNS for services [Conformance]`. */
  name: string;
  state: string;
  /** The failure's message and location, when it failed. */
  failure: string;
  seconds: number;
}

/** What the JSON report of `--ginkgo.json-report` holds, as far as we read it. */
interface GinkgoReport {
  SpecReports?: {
    ContainerHierarchyTexts: string[] | null;
    LeafNodeText: string;
    LeafNodeType: string;
    State: string;
    RunTime: number;
    Failure?: { Message: string; Location: { FileName: string; LineNumber: number } };
  }[];
}

/**
 * e2e.test with `focus` and `skip` (ginkgo regexps), run in the cluster's directory (its reports land
 * there); resolves with every spec that ran, whatever its outcome (e2e.test exits non-zero when one
 * fails), skipped ones left out.
 */
export async function runE2eSpecs(c: NodeCluster, focus: string, skip: string, timeoutMs = 15 * 60_000): Promise<SpecResult[]> {
  const report = join(c.dir, 'e2e-report.json');
  const args = [
    `--kubeconfig=${c.kubeconfig}`,
    '--provider=skeleton',
    `--dns-domain=${NET.domain}`,
    `--ginkgo.focus=${focus}`,
    `--ginkgo.skip=${skip}`,
    `--ginkgo.json-report=${report}`,
    `--ginkgo.timeout=${Math.floor(timeoutMs / 1000)}s`,
    '--ginkgo.no-color',
    `--report-dir=${c.dir}`,
  ];
  const log = await new Promise<string>((resolve) => {
    execFile(k8sBin('e2e.test'), args, { timeout: timeoutMs + 60_000, maxBuffer: 64 << 20, cwd: c.dir }, (_err, stdout, stderr) => resolve(stdout + stderr));
  });
  let parsed: GinkgoReport[];
  try {
    parsed = JSON.parse(readFileSync(report, 'utf8')) as GinkgoReport[];
  } catch (err) {
    throw new Error(`e2e.test wrote no report (${(err as Error).message}):\n${log.slice(-4000)}`);
  }
  return parsed.flatMap((r) => r.SpecReports ?? []).filter((s) => s.LeafNodeType === 'It' && s.State !== 'skipped').map((s) => ({
    name: [...(s.ContainerHierarchyTexts ?? []), s.LeafNodeText].join(' '),
    state: s.State,
    failure: s.Failure ? `${s.Failure.Message}\n  at ${s.Failure.Location.FileName}:${s.Failure.Location.LineNumber}` : '',
    seconds: s.RunTime / 1e9,
  }));
}
