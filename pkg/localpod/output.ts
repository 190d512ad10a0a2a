// One line per log line, with the program it came from in a fixed-width column, as process managers
// print several programs' output (`kube-dns      | ...`). The nanny passes its forwarder's entries on
// as they are; those (logger "dnscache", text or JSON) are put under dnscache's own name.

/** The widest name, dnsmasq-nanny. */
const WIDTH = 13;
const DNSCACHE_ENTRY = /(?: logger="|"logger":")dnscache["/]/;

export function prefixLine(program: string, line: string): string {
  const name = program === 'dnsmasq-nanny' && DNSCACHE_ENTRY.test(line) ? 'dnscache' : program;
  return `${name.padEnd(WIDTH)} | ${line}`;
}

/** The Supervisor's output callback for `program`: each line leaves through `write` with the column prefix. */
export function programOutput(program: string, write: (line: string) => void): (line: string) => void {
  return (line) => write(prefixLine(program, line));
}
