// Where each program's entry is: cmd/<name>/main.ts beside these sources, or main.js in dist/ (npm
// start runs the build), so the pod runs the same form of the code as the launcher itself.

import { fileURLToPath } from 'node:url';
import type { ProgramName } from './plan.ts';

const EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

export function programEntry(name: ProgramName): string {
  return fileURLToPath(new URL(`../../cmd/${name}/main${EXTENSION}`, import.meta.url));
}
