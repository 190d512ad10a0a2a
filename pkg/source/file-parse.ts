// Reads the text of a cluster file as `kubectl get -o yaml` (or -o json) prints it: one object, a
// multi-document stream, or a List, into the objects DNS cares about. Any malformed document rejects
// the whole text, with the line and column where it went wrong.

const { createHash } = process.getBuiltinModule('node:crypto');
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments } from 'yaml';
import type { Node } from 'yaml';
import type { KubeObject } from './source.ts';

export class ClusterFileError extends Error {
  readonly code = 'SOURCE_ERR_CLUSTER_FILE';
  /** 1-based position of the problem in the file. */
  readonly line: number;
  readonly col: number;
  /** The reason without the position. */
  readonly reason: string;
  constructor(reason: string, line: number, col: number) {
    super(`${reason} at line ${line}, column ${col}`);
    this.name = 'ClusterFileError';
    this.reason = reason;
    this.line = line;
    this.col = col;
  }
}

export interface ClusterObject {
  /** One of the kinds asked for (the very string given, not one per object). */
  kind: string;
  /** `kind/namespace/name`, the identity diffs go by (namespace "default" when absent). */
  key: string;
  object: KubeObject;
  /** A digest of the object's JSON: two loads hold the same object iff these are equal. */
  digest: string;
}

export interface ParsedClusterFile {
  /** Objects of the kinds asked for, in file order, one per key (a later duplicate wins). */
  objects: ClusterObject[];
  /** `kind namespace/name` (or `kind name`) of objects of other kinds (skipped). */
  ignored: string[];
  /** Keys that appeared more than once. */
  duplicates: string[];
}


function describe(v: unknown): string {
  if (v === null || v === undefined) return 'empty';
  if (Array.isArray(v)) return 'a sequence';
  return typeof v === 'object' ? 'a mapping' : `a ${typeof v}`;
}

/** Parses the text, keeping objects of `kinds`; throws ClusterFileError on the first malformed document. */
export function parseClusterFile(text: string, kinds: readonly string[]): ParsedClusterFile {
  // Each kind to its constant: one string per kind instead of one per parsed object.
  const wanted: ReadonlyMap<string, string> = new Map(kinds.map((k) => [k, k]));
  const lines = new LineCounter();
  const fail = (reason: string, offset: number): never => {
    const { line, col } = lines.linePos(offset);
    throw new ClusterFileError(reason, Math.max(line, 1), col);
  };
  const byKey = new Map<string, ClusterObject>();
  const result: ParsedClusterFile = { objects: [], ignored: [], duplicates: [] };

  // Walks one object (or List) with its YAML node, for positions.
  const collect = (value: unknown, node: unknown, where: string, itemKind: string | undefined): void => {
    const offset = (node as Node | null)?.range?.[0] ?? 0;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      fail(`${where} is ${describe(value)}, not a Kubernetes object`, offset);
    }
    const obj = value as Record<string, unknown>;
    if (obj.kind === undefined && itemKind !== undefined) obj.kind = itemKind; // items of a typed list (raw API)
    const kind = obj.kind;
    if (typeof kind !== 'string' || kind === '') fail(`${where} has no kind`, offset);
    const k = kind as string;

    if (k.endsWith('List') && (Array.isArray(obj.items) || (obj.items === null && 'items' in obj))) {
      const items = (obj.items ?? []) as unknown[];
      const itemsNode = isMap(node) ? node.get('items', true) : null;
      const typed = k === 'List' ? undefined : k.slice(0, -'List'.length);
      for (let i = 0; i < items.length; i++) {
        const itemNode = isSeq(itemsNode) ? itemsNode.items[i] : itemsNode;
        collect(items[i], itemNode ?? node, `${k} item #${i + 1}`, typed);
      }
      return;
    }
    if (k === 'List') fail(`${where} is a List without items`, offset);

    const meta = obj.metadata;
    if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) fail(`${k} ${where} has no metadata`, offset);
    const { name, namespace } = meta as Record<string, unknown>;
    if (typeof name !== 'string' || name === '') fail(`${k} ${where} has no metadata.name`, offset);
    if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') {
      fail(`${k} ${name as string}: metadata.namespace is not a string`, offset);
    }
    const ns = (namespace as string | null | undefined) || 'default';
    const dnsKind = wanted.get(k);
    if (dnsKind === undefined) {
      result.ignored.push(`${k} ${namespace ? `${namespace as string}/` : ''}${name as string}`);
      return;
    }
    const key = `${k}/${ns}/${name as string}`;
    if (byKey.has(key)) result.duplicates.push(key);
    byKey.set(key, { kind: dnsKind, key, object: obj as KubeObject, digest: createHash('sha1').update(JSON.stringify(obj)).digest('base64') });
  };

  // `kubectl get -o json` output takes the fast road: the YAML parser keeps a node (with positions)
  // per scalar, which for a 10,000-service file costs about a gigabyte and ten seconds.
  // When it is not JSON after all, the YAML parser below reads it, or says where it is broken.
  // (JSON's own rule applies to duplicate keys on this road: the last one wins.)
  if (/^\s*[{[]/.test(text)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value !== undefined) {
      collect(value, null, 'document #1', undefined);
      for (const o of byKey.values()) result.objects.push(o);
      return result;
    }
  }

  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (!Array.isArray(docs)) return result; // an empty stream: no objects
  for (let d = 0; d < docs.length; d++) {
    const doc = docs[d];
    const err = doc.errors[0];
    if (err) fail(`YAML syntax error: ${err.message}`, err.pos[0]);
    const contents = doc.contents;
    // An empty document (`---` with nothing after it) holds nothing; it is not an error.
    if (contents === null || (isScalar(contents) && contents.value === null)) continue;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      fail(`document #${d + 1}: ${(e as Error).message}`, contents.range?.[0] ?? 0);
    }
    collect(value, contents, `document #${d + 1}`, undefined);
  }
  // Map iteration keeps first-insertion order, so objects stay in file order.
  for (const o of byKey.values()) result.objects.push(o);
  return result;
}
