// The Go text/template actions a CoreDNS template RR is written with, compiled once: `{{ .Name }}`,
// `{{ .Zone }}`, `{{ .Class }}`, `{{ .Type }}`, `{{ .Remote }}`, `{{ index .Match N }}`,
// `{{ .Group.NAME }}` and `{{ index .Group "NAME" }}`, with `{{-`/`-}}` trimming the text beside
// them. Any other action throws (a SyntaxError naming it): refused at its line, never half-served.

export interface TemplateData {
  /** Lowercase, fully qualified: `web.example.org.`. */
  name: string;
  /** The matched zone, fully qualified: `example.org.`. */
  zone: string;
  class: string;
  type: string;
  remote: string;
  /** The regex's match: [0] the whole, then the groups. */
  match: readonly string[];
  /** Groups by number and by name. */
  group: Readonly<Record<string, string>>;
}

export type CompiledTemplate = readonly (string | ((d: TemplateData) => string))[];

const FIELDS: Record<string, (d: TemplateData) => string> = {
  '.Name': (d) => d.name,
  '.Zone': (d) => d.zone,
  '.Class': (d) => d.class,
  '.Type': (d) => d.type,
  '.Remote': (d) => d.remote,
};

function action(text: string): (d: TemplateData) => string {
  const a = text.trim();
  if (FIELDS[a] !== undefined) return FIELDS[a];
  let m = /^index\s+\.Match\s+(\d+)$/.exec(a);
  if (m !== null) {
    const i = Number(m[1]);
    return (d) => d.match[i] ?? '';
  }
  m = /^\.Group\.(\w+)$/.exec(a) ?? /^index\s+\.Group\s+"(\w+)"$/.exec(a);
  if (m !== null) {
    const key = m[1];
    return (d) => d.group[key] ?? '';
  }
  throw new SyntaxError(`the template action {{${text}}}`);
}

export function compileTemplate(text: string): CompiledTemplate {
  const parts: (string | ((d: TemplateData) => string))[] = [];
  let rest = text;
  for (let open = rest.indexOf('{{'); open >= 0; open = rest.indexOf('{{')) {
    const close = rest.indexOf('}}', open);
    if (close < 0) throw new SyntaxError('a template action {{ never closed');
    let inner = rest.slice(open + 2, close);
    let before = rest.slice(0, open);
    let after = rest.slice(close + 2);
    if (inner.startsWith('- ')) [inner, before] = [inner.slice(1), before.trimEnd()];
    if (inner.endsWith(' -')) [inner, after] = [inner.slice(0, -1), after.trimStart()];
    if (before !== '') parts.push(before);
    parts.push(action(inner));
    rest = after;
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

export function renderTemplate(t: CompiledTemplate, d: TemplateData): string {
  let out = '';
  for (const p of t) out += typeof p === 'string' ? p : p(d);
  return out;
}
