// The version of a set of config files, computed as kubernetes/dns's sync_dir.go does: sha256 over
// name, NUL, data, NUL for each file in name order. No files → "" (the version of "no config").

const { createHash } = process.getBuiltinModule('node:crypto');

export function configVersion(files: ReadonlyMap<string, string | Uint8Array>): string {
  if (files.size === 0) return '';
  const hash = createHash('sha256');
  const nul = new Uint8Array(1);
  for (const name of [...files.keys()].sort()) {
    hash.update(name);
    hash.update(nul);
    hash.update(files.get(name)!);
    hash.update(nul);
  }
  return hash.digest('hex');
}
