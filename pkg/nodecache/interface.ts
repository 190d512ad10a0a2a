// -setupinterface: the link that holds the node-local addresses, so the kernel delivers packets to them
// here. A dummy link, as the original; where the kernel has no dummy driver, a bridge without ports
// holds them just as well (said once in the log). Through iproute2's `ip`, as the image carries it.

import { execFile } from 'node:child_process';
const { isIP } = process.getBuiltinModule('node:net');
const { promisify } = process.getBuiltinModule('node:util');

const run = promisify(execFile);

export interface LinkResult {
  /** `dummy`, or `bridge` where the kernel has no dummy driver. */
  kind: 'dummy' | 'bridge';
  /** Addresses added now (the others were there already). */
  added: string[];
}

async function linkExists(name: string): Promise<boolean> {
  return run('ip', ['link', 'show', 'dev', name]).then(() => true, () => false);
}

async function linkKind(name: string): Promise<'dummy' | 'bridge'> {
  const { stdout } = await run('ip', ['-d', 'link', 'show', 'dev', name]);
  return /\n\s+bridge /.test(stdout) ? 'bridge' : 'dummy';
}

async function addLink(name: string): Promise<'dummy' | 'bridge'> {
  try {
    await run('ip', ['link', 'add', name, 'type', 'dummy']);
    return 'dummy';
  } catch (err) {
    if (!/Unknown device type|not supported/i.test(String((err as { stderr?: string }).stderr ?? err))) throw err;
    await run('ip', ['link', 'add', name, 'type', 'bridge']);
    return 'bridge';
  }
}

/** The link `name` up with every address of `ips` (/32 or /128); idempotent, also repairs a half-made one. */
export async function ensureLink(name: string, ips: readonly string[]): Promise<LinkResult> {
  const kind = (await linkExists(name)) ? await linkKind(name) : await addLink(name);
  const { stdout } = await run('ip', ['-o', 'addr', 'show', 'dev', name]);
  const added: string[] = [];
  for (const ip of ips) {
    const prefix = `${ip}/${isIP(ip) === 6 ? 128 : 32}`;
    if (stdout.includes(` ${prefix} `)) continue;
    await run('ip', ['addr', 'add', prefix, 'dev', name]);
    added.push(ip);
  }
  await run('ip', ['link', 'set', name, 'up']);
  return { kind, added };
}

/** Deletes the link (with its addresses); none there is no error. */
export async function removeLink(name: string): Promise<void> {
  if (await linkExists(name)) await run('ip', ['link', 'del', name]);
}
