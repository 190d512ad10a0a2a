// `--probe=<label>,<server>[:<port>],<name>[,<interval>][,<type>]`, checked as the original sidecar
// checks it (cmd/sidecar/main.go probeOptions.Set), with two changes: the default type is A (kube-dns
// REFUSEs ANY), and the interval may also be a Go duration (`500ms`) besides integer seconds.

import { checkUpstream } from '../config/upstream.ts';
import { encodeMessage } from '../dns/codec.ts';
import { Class, Type } from '../dns/constants.ts';
import { emptyMessage } from '../dns/message.ts';
import { parseDuration } from '../flags/flags.ts';

export interface DnsServerAddress {
  /** IP literal, IPv6 without brackets. */
  host: string;
  port: number;
}

export interface ProbeSpec {
  /** `^[a-zA-Z0-9_]+$`: the /healthcheck/<label> path and the metric names. */
  label: string;
  server: DnsServerAddress;
  /** Fully qualified, with the trailing dot (as the original reports it in errors). */
  name: string;
  intervalMs: number;
  /** The query type's number (Type.A, ...) and its name. */
  type: number;
  typeName: ProbeType;
}

export type ProbeType = 'A' | 'AAAA' | 'ANY' | 'SRV';

export const LABEL_PATTERN = /^[a-zA-Z0-9_]+$/;
export const DEFAULT_PROBE_INTERVAL_MS = 5000;
export const DEFAULT_PROBE_TYPE: ProbeType = 'A';

const probeTypes: Record<ProbeType, number> = { A: Type.A, AAAA: Type.AAAA, ANY: Type.ANY, SRV: Type.SRV };

/** Integer seconds as the original (`5`), or a Go duration (`500ms`, `2s`); positive. */
function parseInterval(text: string): number | string {
  const ms = /^[+-]?[0-9]+$/.test(text) ? Number(text) * 1000 : parseDuration(text);
  if (ms === undefined || !Number.isFinite(ms)) return `interval ${JSON.stringify(text)} is neither whole seconds nor a duration such as 500ms`;
  if (ms <= 0) return `interval ${JSON.stringify(text)} must be positive`;
  return ms;
}

/** The name's wire form must exist: labels of 1-63 bytes, 255 in all (the encoder says which rule broke). */
function checkName(name: string): string | undefined {
  if (name === '' || name === '.') return 'the name is empty';
  const m = emptyMessage();
  m.questions.push({ name, type: Type.A, class: Class.IN });
  try {
    encodeMessage(m);
  } catch (err) {
    return `name ${JSON.stringify(name)} is not a valid DNS name: ${(err as Error).message}`;
  }
  return undefined;
}

/** One --probe value → the probe, or the reason it is not one. */
export function parseProbeSpec(text: string): ProbeSpec | string {
  const fields = text.split(',');
  if (fields.length < 3 || fields.length > 5) {
    return `expected <label>,<server>[:<port>],<name>[,<interval>][,<type>] (3 to 5 fields, got ${fields.length})`;
  }
  const [label, serverText, nameText, intervalText, typeText] = fields;
  if (!LABEL_PATTERN.test(label)) return `label ${JSON.stringify(label)} must match ${LABEL_PATTERN.source}`;

  const server = checkUpstream(serverText, 53);
  if (typeof server === 'string') return `server ${JSON.stringify(serverText)}: ${server}`;

  const name = nameText.endsWith('.') ? nameText : `${nameText}.`;
  const nameProblem = checkName(nameText);
  if (nameProblem !== undefined) return nameProblem;

  let intervalMs = DEFAULT_PROBE_INTERVAL_MS;
  if (intervalText !== undefined) {
    const parsed = parseInterval(intervalText);
    if (typeof parsed === 'string') return parsed;
    intervalMs = parsed;
  }

  let typeName = DEFAULT_PROBE_TYPE;
  if (typeText !== undefined) {
    if (!Object.hasOwn(probeTypes, typeText)) return `type ${JSON.stringify(typeText)} must be one of A, AAAA, ANY, SRV`;
    typeName = typeText as ProbeType;
  }
  return { label, server: { host: server.host, port: server.port }, name, intervalMs, type: probeTypes[typeName], typeName };
}

/** Every --probe value, or the first problem (naming the value); a label may be used once. */
export function parseProbeSpecs(texts: readonly string[]): ProbeSpec[] | string {
  const specs: ProbeSpec[] = [];
  const labels = new Set<string>();
  for (const text of texts) {
    const spec = parseProbeSpec(text);
    if (typeof spec === 'string') return `probe ${JSON.stringify(text)}: ${spec}`;
    // The original would panic registering the second /healthcheck/<label> handler.
    if (labels.has(spec.label)) return `probe ${JSON.stringify(text)}: label ${JSON.stringify(spec.label)} is already used by another probe`;
    labels.add(spec.label);
    specs.push(spec);
  }
  return specs;
}
