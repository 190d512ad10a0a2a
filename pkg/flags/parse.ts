// Command-line parsing in the manner of Go's flag and spf13/pflag, so the original manifests' argument
// lists keep working: `--flag=v`, `--flag v`, `-flag=v`, `-flag v`; bool flags bare or `=true|false`;
// `_` and `-` interchangeable in names; everything after a bare `--` is handed back untouched.

import { parseDuration } from './duration.ts';
import { FlagError } from './errors.ts';
import { normalizeFlagName } from './spec.ts';
import type { FlagDef, FlagSpec, FlagValues } from './spec.ts';

export interface ParsedFlags<S extends FlagSpec> {
  values: FlagValues<S>;
  /** The arguments after a bare `--`, unchanged (e.g. dnsmasq's own options for the nanny). */
  rest: string[];
  /** The flags given on the command line (spec keys), like Go's flag.Visit. */
  set: ReadonlySet<keyof S & string>;
  /** `-h`/`--help`/`-help` was given: parsing stopped there and `values` hold the defaults so far. */
  help: boolean;
  /** The flags accepted only for compatibility, as written (`--logtostderr=true`): parseOrExit reports them. */
  ignored: string[];
}

// strconv.ParseBool's spellings.
const trueWords = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const falseWords = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);
const integer = /^([+-]?)(0[xX][0-9a-fA-F]+|[0-9]+)$/;

// The lookup table from normalised name to spec key, built once per spec object.
const lookups = new WeakMap<FlagSpec, Map<string, string>>();

function lookupFor(spec: FlagSpec): Map<string, string> {
  let byName = lookups.get(spec);
  if (byName === undefined) {
    byName = new Map(Object.keys(spec).map((k) => [normalizeFlagName(k), k]));
    lookups.set(spec, byName);
  }
  return byName;
}

function isHelp(name: string): boolean {
  return name === 'h' || name === 'help';
}

/** Converts one textual value; a string return is the reason it is not acceptable. */
function convert(def: FlagDef, text: string): { value: unknown } | string {
  switch (def.type) {
    case 'string':
      return { value: text };
    case 'bool':
      if (trueWords.has(text)) return { value: true };
      if (falseWords.has(text)) return { value: false };
      return 'not a boolean (true or false)';
    case 'int': {
      const m = integer.exec(text);
      const n = m === null ? NaN : (m[1] === '-' ? -1 : 1) * Number(m[2]);
      return Number.isSafeInteger(n) ? { value: n } : 'not an integer';
    }
    case 'duration': {
      const ms = parseDuration(text);
      return ms === undefined ? 'not a duration (a number with a unit: 10s, 500ms, 1m30s, 2h)' : { value: ms };
    }
    case 'stringList': {
      if (def.splitCommas === false) return { value: [text] };
      const items: string[] = [];
      for (const item of text.split(',')) {
        const trimmed = item.trim();
        if (trimmed !== '') items.push(trimmed);
      }
      return { value: items };
    }
  }
}

export function parseFlags<S extends FlagSpec>(spec: S, argv: readonly string[]): ParsedFlags<S> {
  const byName = lookupFor(spec);
  const values: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(spec)) {
    values[key] = def.type === 'stringList' ? [...def.default] : def.default;
  }
  const set = new Set<string>();
  // How each flag was last written, for messages: ["--dns-port", "abc"].
  const written = new Map<string, [string, string]>();
  const ignored: string[] = [];
  let rest: string[] = [];
  let help = false;

  const namesFlag = (arg: string): boolean => {
    if (arg === '--') return true;
    if (!arg.startsWith('-') || arg.length < 2) return false;
    const body = arg.slice(arg.startsWith('--') ? 2 : 1);
    const eq = body.indexOf('=');
    const name = normalizeFlagName(eq < 0 ? body : body.slice(0, eq));
    return byName.has(name) || isHelp(name);
  };

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      throw new FlagError(
        'FLAG_UNKNOWN',
        arg,
        `unexpected argument ${JSON.stringify(arg)}: flags start with - or --, and arguments for a child program go after --`,
      );
    }
    const dashes = arg.startsWith('--') ? '--' : '-';
    const body = arg.slice(dashes.length);
    if (body === '' || body.startsWith('-') || body.startsWith('=')) {
      throw new FlagError('FLAG_UNKNOWN', arg, `bad flag syntax: ${arg}`);
    }
    const eq = body.indexOf('=');
    const rawName = eq < 0 ? body : body.slice(0, eq);
    const shown = dashes + rawName;
    const key = byName.get(normalizeFlagName(rawName));
    if (key === undefined) {
      if (isHelp(rawName)) {
        help = true;
        break;
      }
      throw new FlagError('FLAG_UNKNOWN', rawName, `unknown flag: ${shown}`);
    }
    const def = spec[key];

    let text: string;
    if (eq >= 0) text = body.slice(eq + 1);
    else if (def.type === 'bool') text = 'true';
    else if (def.type === 'string' && def.bareValue !== undefined) text = def.bareValue;
    else {
      const next = argv[i + 1];
      if (next === undefined || namesFlag(next)) {
        throw new FlagError('FLAG_MISSING', rawName, `flag needs a value: ${shown}`);
      }
      text = next;
      i++;
    }

    const converted = convert(def, text);
    if (typeof converted === 'string') {
      throw new FlagError('FLAG_VALUE', rawName, `invalid value ${JSON.stringify(text)} for flag ${shown}: ${converted}`);
    }
    if (def.type === 'stringList' && set.has(key)) {
      // Repeated list flags accumulate; the first occurrence replaces the default (pflag's StringSlice).
      (values[key] as string[]).push(...(converted.value as string[]));
      const prev = written.get(key);
      written.set(key, [shown, prev === undefined ? text : `${prev[1]},${text}`]);
    } else {
      values[key] = converted.value;
      written.set(key, [shown, text]);
    }
    set.add(key);
    if (def.ignored) ignored.push(`${shown}=${text}`);
  }

  for (const key of set) {
    const validate = spec[key].validate as ((v: unknown) => string | undefined | void) | undefined;
    if (validate === undefined) continue;
    const reason = validate(values[key]);
    if (typeof reason === 'string') {
      const [shown, text] = written.get(key)!;
      throw new FlagError('FLAG_VALUE', shown.replace(/^-+/, ''), `invalid value ${JSON.stringify(text)} for flag ${shown}: ${reason}`);
    }
  }

  return { values: values as FlagValues<S>, rest, set: set as Set<keyof S & string>, help, ignored };
}
