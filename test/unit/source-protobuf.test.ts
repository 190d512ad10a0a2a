// The protobuf list reader on bodies no API server sends: truncated, wrongly framed, compressed,
// hostile. Each is a ProtobufError, never another exception, and what the schema does not name is
// skipped. Bodies the real kube-apiserver sends: test/e2e/source-protobuf.test.ts.

import t from 'tap';
import { ProtobufError, decodeProtobufList } from '../../pkg/source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../../pkg/source/kubernetes-protobuf.ts';

// A minimal writer, enough to frame the cases below.
const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
};
const bytes = (field: number, body: number[]): number[] => [...varint((field << 3) | 2), ...varint(body.length), ...body];
const text = (field: number, s: string): number[] => bytes(field, [...Buffer.from(s)]);
const number = (field: number, n: number): number[] => [...varint(field << 3), ...varint(n)];
const envelope = (list: number[], extra: number[] = []): Buffer => Buffer.from([0x6b, 0x38, 0x73, 0x00, ...text(1, 'x'), ...bytes(2, list), ...extra]);

const SCHEMA: ProtoSchema = {
  1: ['metadata', 'message', { 1: ['name', 'string'], 11: ['labels', 'map'] }],
  2: ['port', 'int'],
  3: ['ready', 'bool'],
  4: ['ips', 'strings'],
};
const item = (...fields: number[][]) => bytes(2, fields.flat());

t.test('a list: its version and continue token, the named fields of each item, the rest skipped', (t) => {
  const list = [
    ...bytes(1, [...text(2, '42'), ...text(3, 'next'), ...number(4, 7)]),
    ...item(bytes(1, [...text(1, 'a'), ...bytes(11, [...text(1, 'k'), ...text(2, 'v')]), ...bytes(11, [...text(1, '__proto__'), ...text(2, 'p')])]), number(2, 53), number(3, 0), text(4, '10.0.0.1'), text(4, '10.0.0.2'), text(9, 'skipped'), [0x55, 1, 2, 3, 4], [0x49, 1, 2, 3, 4, 5, 6, 7, 8]),
    ...item(number(1, 5), text(2, 'wrong wire type for an int'), bytes(1, text(1, ''))),
  ];
  const got = decodeProtobufList(envelope(list), SCHEMA);
  t.same(got.metadata, { resourceVersion: '42', continue: 'next' });
  t.equal(got.items.length, 2);
  const [a, b] = got.items as { metadata: { name?: string; labels?: Record<string, string> }; port?: number; ready?: boolean; ips?: string[] }[];
  t.equal(a.metadata.name, 'a');
  t.equal(a.port, 53);
  t.equal(a.ready, false, 'a false bool is kept: a nil and a false ready differ');
  t.same(a.ips, ['10.0.0.1', '10.0.0.2']);
  t.same(Object.keys(a).sort(), ['ips', 'metadata', 'port', 'ready']);
  t.equal(a.metadata.labels?.k, 'v');
  t.equal(Object.getPrototypeOf(a.metadata.labels), Object.prototype, 'a "__proto__" key does not replace the prototype');
  t.same(Object.keys(a.metadata.labels ?? {}), ['k', '__proto__']);
  t.same(b, { metadata: {} }, 'fields on the wrong wire type are skipped; an empty string is left out, as JSON leaves it out');
  t.end();
});

t.test('bodies that are not a readable list are a ProtobufError', (t) => {
  const good = [...item(text(1, 'x'))];
  const bad: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['JSON', Buffer.from('{"items":[]}')],
    ['no list', Buffer.from([0x6b, 0x38, 0x73, 0x00, ...text(1, 'x')])],
    ['gzip', envelope(good, text(3, 'gzip'))],
    ['a length past the end', envelope(good).subarray(0, envelope(good).length - 1)],
    ['a length past its message', envelope([...bytes(2, [...varint((1 << 3) | 2), 50, 1, 2])])],
    ['a truncated varint', envelope([...item(number(2, 300)).slice(0, -1)].concat([0x10, 0x80]))],
    ['a varint of 11 bytes', envelope([...bytes(2, [0x10, ...Array(10).fill(0xff), 1])])],
    ['a group (wire type 3)', envelope([...bytes(2, [0x0b])])],
    ['a fixed64 past its message', envelope([...bytes(2, [0x49, 1, 2])])],
  ];
  for (const [what, body] of bad) t.throws(() => decodeProtobufList(body, SCHEMA), ProtobufError, what);
  t.end();
});

t.test('strings: every one read exactly, short ones sharing a table of fewer slots than there are names, non-ASCII and empty ones', (t) => {
  // 20,000 distinct names thrash a table of 4,096 slots: each slot is asked for strings that differ.
  const names = Array.from({ length: 20_000 }, (_, i) => `svc-${i.toString(36)}`).concat(['café', 'ü', '名前', '', 'a'.repeat(32), 'b'.repeat(33)]);
  const body = (list: string[]) => envelope(list.flatMap((n) => item(bytes(1, text(1, n)), text(4, n))));
  const got = decodeProtobufList(body(names), SCHEMA).items as { metadata: { name?: string }; ips?: string[] }[];
  t.same(got.map((o) => o.metadata.name ?? ''), names, 'each name as written (an empty one left out)');
  t.same(got.map((o) => o.ips?.[0]), names, 'the same strings in a repeated field');
  t.end();
});
