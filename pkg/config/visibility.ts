// The ConfigMap key `visibility`: which namespaces' Services a namespace's pods may resolve (issue 26).
// JSON, as the other keys are:
//
//   visibility: |
//     {"allow": {"frontend": ["backend"], "monitoring": ["*"]},
//      "shared": ["kube-system/kube-dns", "default/kubernetes", "platform"],
//      "unknownAskers": "allow"}
//
// A pod sees its own namespace's names, those of the namespaces `allow` lists for its namespace ("*":
// every one), and the `shared` ones ("ns": a whole namespace, "ns/name": one Service); `shared`
// unsaid is kube-dns's own Service and the API server's. `unknownAskers` (allow, unsaid; or deny) is
// what an asker gets whose namespace is not known: a pod on the host's network, an address the Pod
// watch has not shown. The key absent or blank: no policy, every answer as without it.

import { ConfigError } from './errors.ts';
import type { VisibilityPolicy } from './model.ts';
import { isStringArray, parseJson } from './json.ts';
import { isDns1123Label } from './names.ts';

const KEY = 'visibility';
const quote = JSON.stringify;

/** Shared when the policy does not say: what every pod needs to reach (DNS itself, the API server). */
export const DEFAULT_SHARED: readonly string[] = ['kube-system/kube-dns', 'default/kubernetes'];

function invalid(entry: string, why: string): ConfigError {
  return new ConfigError('CONFIG_INVALID', KEY, entry, `${KEY}: ${why}`);
}

function shape(why: string): ConfigError {
  return new ConfigError('CONFIG_JSON', KEY, '', `${KEY}: ${why}`);
}

function namespace(name: unknown, where: string): string {
  if (typeof name !== 'string' || !isDns1123Label(name)) throw invalid(String(name), `${where}: ${quote(name)} is not a namespace name`);
  return name;
}

function stringList(v: unknown, where: string): string[] {
  if (!isStringArray(v)) throw shape(`${where}: expected an array of strings`);
  return v;
}

function readAllow(v: unknown): Map<string, ReadonlySet<string>> {
  const out = new Map<string, ReadonlySet<string>>();
  if (v === undefined) return out;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw shape('"allow": expected an object of namespace → [namespaces]');
  for (const [asker, seen] of Object.entries(v)) {
    const where = `"allow": ${quote(asker)}`;
    namespace(asker, '"allow"');
    out.set(asker, new Set(stringList(seen, where).map((ns) => (ns === '*' ? ns : namespace(ns, where)))));
  }
  return out;
}

function readShared(v: unknown): { namespaces: Set<string>; services: Set<string> } {
  const namespaces = new Set<string>();
  const services = new Set<string>();
  for (const entry of v === undefined ? DEFAULT_SHARED : stringList(v, '"shared"')) {
    const [ns, name, more] = entry.split('/');
    if (more !== undefined || (name !== undefined && !isDns1123Label(name))) throw invalid(entry, `"shared": ${quote(entry)} is not "namespace" or "namespace/service"`);
    namespace(ns, '"shared"');
    if (name === undefined) namespaces.add(ns);
    else services.add(entry);
  }
  return { namespaces, services };
}

/** `visibility`'s value → the policy; throws ConfigError naming the entry at fault. */
export function parseVisibility(text: string): VisibilityPolicy {
  const json = parseJson(KEY, text);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw shape('expected a JSON object with "allow", "shared", "unknownAskers"');
  return visibilityPolicy(json as Record<string, unknown>);
}

/** The policy from its fields as the JSON has them (a Corefile's `visibility` block too); throws ConfigError. */
export function visibilityPolicy(o: Record<string, unknown>): VisibilityPolicy {
  for (const k of Object.keys(o)) if (k !== 'allow' && k !== 'shared' && k !== 'unknownAskers') throw invalid(k, `unknown field ${quote(k)} (allow, shared, unknownAskers)`);
  const unknownAskers = o.unknownAskers ?? 'allow';
  if (unknownAskers !== 'allow' && unknownAskers !== 'deny') throw invalid(String(unknownAskers), `"unknownAskers": ${quote(unknownAskers)} is neither "allow" nor "deny"`);
  const shared = readShared(o.shared);
  return { allow: readAllow(o.allow), sharedNamespaces: shared.namespaces, sharedServices: shared.services, unknownAskers };
}
