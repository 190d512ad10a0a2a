// The declarative shape of a program's flags. A spec is a plain object keyed by flag name (as it is
// written on the command line, without dashes); its parsed values come back under the same keys.

export type FlagType = 'string' | 'int' | 'bool' | 'duration' | 'stringList';

/** Returns a reason when the value is not acceptable (printed after the flag and value), else nothing. */
export type Validator<T> = (value: T) => string | undefined | void;

interface FlagCommon {
  help: string;
  /**
   * Accepted for compatibility and otherwise without effect (e.g. klog's --logtostderr). Setting one
   * logs a single info line per parse; --help marks it "(ignored)".
   */
  ignored?: boolean;
}

export interface StringFlag extends FlagCommon {
  type: 'string';
  default: string;
  validate?: Validator<string>;
  /** The value taken when the flag is given bare (`--version`), like pflag's NoOptDefVal. */
  bareValue?: string;
}
export interface IntFlag extends FlagCommon {
  type: 'int';
  default: number;
  validate?: Validator<number>;
}
export interface BoolFlag extends FlagCommon {
  type: 'bool';
  default: boolean;
  validate?: Validator<boolean>;
}
export interface DurationFlag extends FlagCommon {
  type: 'duration';
  /** Milliseconds. */
  default: number;
  validate?: Validator<number>;
}
export interface StringListFlag extends FlagCommon {
  type: 'stringList';
  default: readonly string[];
  validate?: Validator<string[]>;
  /**
   * Split each occurrence on commas (default true). False for values that contain commas themselves,
   * such as the sidecar's repeated `--probe=label,server,name,...` (pflag's StringArray).
   */
  splitCommas?: boolean;
}

export type FlagDef = StringFlag | IntFlag | BoolFlag | DurationFlag | StringListFlag;
export type FlagSpec = Record<string, FlagDef>;

export type ValueOf<D extends FlagDef> = D extends StringFlag
  ? string
  : D extends IntFlag | DurationFlag
    ? number
    : D extends BoolFlag
      ? boolean
      : string[];

export type FlagValues<S extends FlagSpec> = { -readonly [K in keyof S]: ValueOf<S[K]> };

/** pflag's WordSepNormalizeFunc: `log_dir` and `log-dir` name the same flag. */
export function normalizeFlagName(name: string): string {
  return name.includes('_') ? name.replaceAll('_', '-') : name;
}

const validName = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Checks a spec once at startup (names, defaults of the declared type, no two names that normalise
 * alike) and returns it unchanged, typed, for `parseFlags`.
 */
export function defineFlags<S extends FlagSpec>(spec: S): S {
  const seen = new Map<string, string>();
  for (const [name, def] of Object.entries(spec)) {
    if (!validName.test(name)) throw new TypeError(`flag name ${JSON.stringify(name)} is not valid`);
    const normal = normalizeFlagName(name);
    const other = seen.get(normal);
    if (other !== undefined) throw new TypeError(`flags ${other} and ${name} are the same flag`);
    seen.set(normal, name);
    if (name === 'help' || name === 'h') throw new TypeError(`flag ${name} is reserved for usage`);
    const d = def.default as unknown;
    const ok =
      def.type === 'string'
        ? typeof d === 'string'
        : def.type === 'bool'
          ? typeof d === 'boolean'
          : def.type === 'stringList'
            ? Array.isArray(d) && d.every((x) => typeof x === 'string')
            : def.type === 'int'
              ? Number.isSafeInteger(d)
              : typeof d === 'number' && Number.isFinite(d);
    if (!ok) throw new TypeError(`flag ${name}: default does not match type ${def.type}`);
  }
  return spec;
}
