// One line per log line, with the program it came from in a fixed-width column, as process managers
// print several programs' output (`kube-dns      | ...`). The nanny passes its forwarder's lines on
// as `dnscache: ...`; those are put under dnscache's own name.

/** The widest name, dnsmasq-nanny. */
const WIDTH = 13;
const CHILD_OF_NANNY = 'dnscache: ';

export function prefixLine(program: string, line: string): string {
  let name = program;
  let text = line;
  if (program === 'dnsmasq-nanny' && text.startsWith(CHILD_OF_NANNY)) {
    name = 'dnscache';
    text = text.slice(CHILD_OF_NANNY.length);
  }
  return `${name.padEnd(WIDTH)} | ${text}`;
}

/**
 * The Supervisor's output callback for `program`: its lines arrive as `<program>: <line>`, and leave
 * through `write` with the column prefix instead.
 */
export function programOutput(program: string, write: (line: string) => void): (line: string) => void {
  const own = `${program}: `;
  return (line) => write(prefixLine(program, line.startsWith(own) ? line.slice(own.length) : line));
}
