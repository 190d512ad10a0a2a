// manifests/monitoring/alerts.yaml through the real promtool: the rules are valid, and each alert fires
// and stays quiet as alerts.test.yaml says.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
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
