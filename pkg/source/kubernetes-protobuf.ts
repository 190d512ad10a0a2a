// A list in Kubernetes' protobuf encoding ("application/vnd.kubernetes.protobuf"), read into the JSON
// shape the rest of kube-dns reads, keeping only the fields a schema names. Why: at 50,000 pods most
// of a start was parsing JSON lists whole (managedFields, statuses, containers) and collecting them
// again; the API server also serves protobuf lists two to three times cheaper than JSON. Everything a
// schema does not name is skipped unread. Watches stay JSON: one event at a time costs little.
//
// The wire: "k8s\0", then a runtime.Unknown whose `raw` (field 2) holds the message: a list's is
// ListMeta (field 1: resourceVersion 2, continue 3) and the items (field 2); an error's a Status.

/** A field kept: its JSON name and how it is encoded; `message(s)` with the schema of the message. */
export type ProtoField =
  | readonly [name: string, type: 'string' | 'strings' | 'int' | 'bool' | 'map']
  | readonly [name: string, type: 'message' | 'messages', schema: ProtoSchema];

/** Field number → what it is read as. A field not listed is skipped. */
export type ProtoSchema = { readonly [field: number]: ProtoField };

export interface ProtoList {
  metadata: { resourceVersion?: string; continue?: string };
  items: Record<string, unknown>[];
}

export class ProtobufError extends Error {
  readonly code = 'KDT_ERR_PROTOBUF';
  constructor(message: string) {
    super(`protobuf body: ${message}`);
    this.name = 'ProtobufError';
  }
}

/** metav1.ObjectMeta: who an object is (the source keys and versions objects by these). */
export const OBJECT_IDENTITY: ProtoSchema = {
  1: ['name', 'string'],
  3: ['namespace', 'string'],
  5: ['uid', 'string'],
  6: ['resourceVersion', 'string'],
};

/** metav1.ObjectMeta with its labels and annotations. */
export const OBJECT_META: ProtoSchema = { ...OBJECT_IDENTITY, 11: ['labels', 'map'], 12: ['annotations', 'map'] };

const LIST_META: ProtoSchema = { 2: ['resourceVersion', 'string'], 3: ['continue', 'string'] };
const UNKNOWN_RAW = 2;
const UNKNOWN_CONTENT_ENCODING = 3;

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;

/** ASCII strings up to this length are shared (namespaces, port names, protocols, node names). */
const MAX_SHARED_LENGTH = 32;
/** Slots of the table of shared strings (a power of two). */
const SHARED_SLOTS = 4096;

// The short strings read last, by a hash of their bytes: a string read again is found without being
// made first, so the store holds one copy of each namespace, port name and protocol (as JSON.parse
// shares them; measured: 20 % more heap without) and the decoder makes no garbage for them. A slot
// holds the last string hashed to it; one table for every body, at most SHARED_SLOTS short strings.
const shared: string[] = new Array<string>(SHARED_SLOTS).fill('');

/** The content type a protobuf list arrives with. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/** One pass over a buffer; every read checks its bounds (a truncated or hostile body throws ProtobufError). */
class Reader {
  readonly buf: Buffer;
  pos: number;
  constructor(buf: Buffer, pos: number) {
    this.buf = buf;
    this.pos = pos;
  }

  varint(end: number): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw new ProtobufError('truncated varint');
      const b = this.buf[this.pos++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new ProtobufError('varint longer than 10 bytes');
  }

  /** The end of a length-delimited field starting here. */
  length(end: number): number {
    const n = this.varint(end);
    const stop = this.pos + n;
    if (stop > end) throw new ProtobufError('field runs past its message');
    return stop;
  }

  string(end: number): string {
    const stop = this.length(end);
    const start = this.pos;
    this.pos = stop;
    const buf = this.buf;
    if (stop - start > MAX_SHARED_LENGTH) return utf8Slice(buf, start, stop);
    let h = 0x811c9dc5;
    let high = 0;
    for (let i = start; i < stop; i++) {
      high |= buf[i];
      h = Math.imul(h ^ buf[i], 0x01000193);
    }
    if (high >= 0x80) return utf8Slice(buf, start, stop);
    const slot = (h >>> 0) & (SHARED_SLOTS - 1);
    const known = shared[slot];
    if (known.length === stop - start && sameAscii(known, buf, start)) return known;
    return (shared[slot] = latin1Slice(buf, start, stop));
  }

  skip(wire: number, end: number): void {
    if (wire === VARINT) this.varint(end);
    else if (wire === LENGTH) this.pos = this.length(end);
    else if (wire === FIXED64) this.pos += 8;
    else if (wire === FIXED32) this.pos += 4;
    else throw new ProtobufError(`wire type ${wire} is not one Kubernetes writes`);
    if (this.pos > end) throw new ProtobufError('field runs past its message');
  }

  /** The message from here to `end`, keeping what `schema` names. */
  message(schema: ProtoSchema, end: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.pos < end) {
      const tag = this.varint(end);
      const wire = tag & 7;
      const field = schema[tag >>> 3];
      if (field === undefined || wire !== (field[1] === 'int' || field[1] === 'bool' ? VARINT : LENGTH)) {
        this.skip(wire, end);
        continue;
      }
      this.field(out, field, end);
    }
    return out;
  }

  private field(out: Record<string, unknown>, field: ProtoField, end: number): void {
    const name = field[0];
    switch (field[1]) {
      case 'string': {
        // Protobuf writes an unset string as ""; JSON leaves it out, and so does this.
        const value = this.string(end);
        if (value !== '') out[name] = value;
        return;
      }
      case 'int':
        out[name] = this.varint(end);
        return;
      case 'bool':
        out[name] = this.varint(end) !== 0;
        return;
      case 'strings':
        repeated(out, name).push(this.string(end));
        return;
      case 'map':
        this.entry((out[name] ??= {}) as Record<string, string>, end);
        return;
      case 'message':
        out[name] = this.message(field[2], this.length(end));
        return;
      case 'messages':
        repeated(out, name).push(this.message(field[2], this.length(end)));
        return;
    }
  }

  /** One map<string, string> entry: key 1, value 2. */
  private entry(map: Record<string, string>, end: number): void {
    const stop = this.length(end);
    let key = '';
    let value = '';
    while (this.pos < stop) {
      const tag = this.varint(stop);
      if (tag === ((1 << 3) | LENGTH)) key = this.string(stop);
      else if (tag === ((2 << 3) | LENGTH)) value = this.string(stop);
      else this.skip(tag & 7, stop);
    }
    // A ConfigMap key may be "__proto__": kept as the data key it is, as JSON.parse keeps it.
    if (key === '__proto__') Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
    else map[key] = value;
  }
}

/** The list a repeated field's entries gather in (a repeated field comes as one entry per field). */
function repeated(out: Record<string, unknown>, name: string): unknown[] {
  return (out[name] ??= []) as unknown[];
}

/** Buffer's own decoders, without toString()'s argument checks. */
type Slices = { utf8Slice(start: number, stop: number): string; latin1Slice(start: number, stop: number): string };

const utf8Slice = (buf: Buffer, start: number, stop: number): string => (buf as unknown as Slices).utf8Slice(start, stop);
const latin1Slice = (buf: Buffer, start: number, stop: number): string => (buf as unknown as Slices).latin1Slice(start, stop);

/** Whether ASCII string `s` is the bytes of `buf` from `at`. */
function sameAscii(s: string, buf: Buffer, at: number): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== buf[at + i]) return false;
  return true;
}

/** The message inside a protobuf body's envelope ("k8s\0", a runtime.Unknown whose raw holds it), by `schema`. */
export function decodeProtobuf(body: Buffer, schema: ProtoSchema): Record<string, unknown> {
  if (body.length < 4 || body[0] !== 0x6b || body[1] !== 0x38 || body[2] !== 0x73 || body[3] !== 0) {
    throw new ProtobufError('no "k8s\\0" envelope');
  }
  const r = new Reader(body, 4);
  let message: Record<string, unknown> | null = null;
  while (r.pos < body.length) {
    const tag = r.varint(body.length);
    if (tag === ((UNKNOWN_CONTENT_ENCODING << 3) | LENGTH)) {
      const encoding = r.string(body.length);
      if (encoding !== '') throw new ProtobufError(`content encoding ${JSON.stringify(encoding)} is not read`);
    } else if (tag === ((UNKNOWN_RAW << 3) | LENGTH)) {
      message = r.message(schema, r.length(body.length));
    } else {
      r.skip(tag & 7, body.length);
    }
  }
  if (message === null) throw new ProtobufError('nothing in the envelope');
  return message;
}

/** Reads a protobuf list body, each item by `item` (its metadata: OBJECT_META or OBJECT_IDENTITY). */
export function decodeProtobufList(body: Buffer, item: ProtoSchema): ProtoList {
  const list = decodeProtobuf(body, { 1: ['metadata', 'message', LIST_META], 2: ['items', 'messages', item] });
  return { metadata: list.metadata ?? {}, items: (list.items as Record<string, unknown>[] | undefined) ?? [] };
}

/** metav1.Status: what an error answer says (the API server answers errors in the encoding asked for). */
export const STATUS_FIELDS: ProtoSchema = { 3: ['message', 'string'], 4: ['reason', 'string'], 6: ['code', 'int'] };
