// Go's time.Duration text form: a sequence of decimal numbers with a unit each ("300ms", "1.5h",
// "2h45m"), optional sign. Values are carried in milliseconds (fractions allowed for µs/ns).

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5 micro sign
  'μs': 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const component = /(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)/y;

/** Parses a Go duration into milliseconds; undefined when `text` is not one. "0" is allowed, as in Go. */
export function parseDuration(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  component.lastIndex = 0;
  while (component.lastIndex < s.length) {
    const start = component.lastIndex;
    const m = component.exec(s);
    if (m === null || m.index !== start) return undefined;
    const number = m[1];
    if (number === '' || number === '.') return undefined;
    total += Number(number) * unitMs[m[2]];
  }
  return sign * total;
}

function trimFraction(n: number): string {
  // At most 9 fractional digits, as Go prints; no trailing zeros.
  return Number(n.toFixed(9)).toString();
}

/** Formats milliseconds the way Go's Duration.String() does: "0s", "500ms", "1m30s", "2h0m0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1e-3) return `${sign}${trimFraction(abs * 1e6)}ns`;
  if (abs < 1) return `${sign}${trimFraction(abs * 1e3)}µs`;
  if (abs < 1000) return `${sign}${trimFraction(abs)}ms`;
  const hours = Math.floor(abs / 3_600_000);
  const minutes = Math.floor((abs % 3_600_000) / 60_000);
  const seconds = trimFraction((abs % 60_000) / 1000);
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
