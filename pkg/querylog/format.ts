// CoreDNS's `log` format: text with placeholders, compiled once into literal and field parts. The
// placeholders are CoreDNS's (plugin/pkg/replacer); a `{...}` that names none is printed as written,
// and metadata (`{/label}`) prints `-`, as CoreDNS does without its metadata plugin.

/** CoreDNS's Common Log Format (`{common}`), and `{combined}`: the same with the opcode. */
export const COMMON_LOG_FORMAT = '{remote}:{port} - {>id} "{type} {class} {name} {proto} {size} {>do} {>bufsize}" {rcode} {>rflags} {rsize} {duration}';
export const COMBINED_LOG_FORMAT = `${COMMON_LOG_FORMAT} "{>opcode}"`;

/** What a placeholder prints. */
export const Field = {
  remote: 0,
  port: 1,
  id: 2,
  type: 3,
  class: 4,
  name: 5,
  proto: 6,
  size: 7,
  do: 8,
  bufsize: 9,
  rcode: 10,
  rflags: 11,
  rsize: 12,
  duration: 13,
  opcode: 14,
  empty: 15,
} as const;

const PLACEHOLDERS = new Map<string, number>([
  ['{remote}', Field.remote], ['{port}', Field.port], ['{>id}', Field.id], ['{type}', Field.type], ['{class}', Field.class],
  ['{name}', Field.name], ['{proto}', Field.proto], ['{size}', Field.size], ['{>do}', Field.do], ['{>bufsize}', Field.bufsize],
  ['{rcode}', Field.rcode], ['{>rflags}', Field.rflags], ['{rsize}', Field.rsize], ['{duration}', Field.duration], ['{>opcode}', Field.opcode],
]);

/** A compiled format: literal text (string) and fields (number), in order. */
export type LogFormat = readonly (string | number)[];

/** Placeholders CoreDNS has that a program cannot fill (the address a packet came to, on a wildcard bind). */
export const UNSERVED_PLACEHOLDERS: readonly string[] = ['{local}'];

/** `text` compiled, `{common}` and `{combined}` expanded; as CoreDNS reads it (each `}` closes the nearest `{` before it). */
export function compileFormat(text: string): LogFormat {
  let s = text.replaceAll('{common}', COMMON_LOG_FORMAT).replaceAll('{combined}', COMBINED_LOG_FORMAT);
  const parts: (string | number)[] = [];
  const literal = (t: string) => {
    if (t === '') return;
    if (typeof parts.at(-1) === 'string') parts[parts.length - 1] += t;
    else parts.push(t);
  };
  for (let j = s.indexOf('}'); j >= 0; j = s.indexOf('}')) {
    const i = s.lastIndexOf('{', j);
    if (i < 0) {
      literal(s.slice(0, j + 1));
    } else {
      literal(s.slice(0, i));
      const label = s.slice(i, j + 1);
      const field = PLACEHOLDERS.get(label);
      if (field !== undefined) parts.push(field);
      else if (label.startsWith('{/')) parts.push(Field.empty);
      else literal(label);
    }
    s = s.slice(j + 1);
  }
  literal(s);
  return parts;
}
