// manifests/monitoring/ through the real promtool: the alerting rules are valid, each alert fires and
// stays quiet as alerts.test.yaml says, and every expression of the dashboard is valid PromQL.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { stringify } from 'yaml';
import { repoRoot } from '../helpers/process.ts';
import { promtoolBin, promtoolCanRun } from '../monitoring/promtool.ts';

const run = promisify(execFile);
const dir = `${repoRoot}manifests/monitoring`;

t.test('promtool check rules: the alerting rules are valid', async (t) => {
  if (!promtoolCanRun(t)) return;
  const r = await run(promtoolBin(), ['check', 'rules', 'alerts.yaml'], { cwd: dir });
  t.match(r.stdout, /SUCCESS: \d+ rules found/);
});

t.test('promtool test rules: every alert fires when it should and not when it should not', async (t) => {
  if (!promtoolCanRun(t)) return;
  const r = await run(promtoolBin(), ['test', 'rules', 'alerts.test.yaml'], { cwd: dir }).catch((err: { stdout: string; stderr: string }) => {
    throw new Error(`promtool test rules failed:\n${err.stdout}\n${err.stderr}`);
  });
  t.match(r.stdout, /SUCCESS/);
});

t.test('promtool check rules on every dashboard expression: each one is valid PromQL', async (t) => {
  if (!promtoolCanRun(t)) return;
  const dashboard = JSON.parse(readFileSync(`${dir}/dashboard.json`, 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  const rules = dashboard.panels.flatMap((p, i) => p.targets.map((target, j) => ({ record: `dashboard:panel${i}_${j}`, expr: target.expr })));
  const tmp = mkdtempSync(join(tmpdir(), 'kdt-dashboard-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  writeFileSync(join(tmp, 'dashboard-rules.yaml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
  const r = await run(promtoolBin(), ['check', 'rules', 'dashboard-rules.yaml'], { cwd: tmp }).catch((err: { stdout: string; stderr: string }) => {
    throw new Error(`an expression of dashboard.json is not valid PromQL:\n${err.stdout}\n${err.stderr}`);
  });
  t.match(r.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
});
