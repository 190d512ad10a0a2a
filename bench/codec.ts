// Micro-benchmark: our codec against dns2 (the reference decoder in tests), plus the server's
// per-packet hot path. Run: npx node bench/codec.ts
// Figures are host-specific; the ratios are the point. Results go in pkg/dns/README.md.

import { performance } from 'node:perf_hooks';
import dns2 from 'dns2';
import { Class, Type } from '../pkg/dns/constants.ts';
import { encodeMessage, parseMessage, readQuestion, QUESTION_KEY_MAX } from '../pkg/dns/codec.ts';
import { emptyMessage } from '../pkg/dns/message.ts';
import type { Message } from '../pkg/dns/message.ts';
import { render, templateFromEncoded } from '../pkg/dns/template.ts';

const { Packet } = dns2 as unknown as { Packet: { parse(b: Buffer): unknown; new (): Dns2Packet } };
interface Dns2Packet {
  header: Record<string, number>;
  questions: unknown[];
  answers: unknown[];
  additionals: unknown[];
  toBuffer(): Buffer;
}

function bench(name: string, fn: () => unknown, ms = 1500): number {
  for (let i = 0; i < 2000; i++) fn(); // warm up
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
    now = performance.now();
  }
  const us = ((now - start) * 1000) / n;
  console.log(`${name.padEnd(44)} ${us.toFixed(2).padStart(8)} µs/op`);
  return us;
}

const SVC = 'web.default.svc.cluster.local';

/** 1 A record: the most common answer. */
function oneA(): Message {
  const m = emptyMessage(1);
  m.qr = true;
  m.aa = true;
  m.questions.push({ name: SVC, type: Type.A, class: Class.IN });
  m.answers.push({ name: SVC, type: Type.A, class: Class.IN, ttl: 30, data: { address: '10.96.0.10' } });
  return m;
}

/** 10 SRV answers with 10 A records of glue: a headless service's SRV answer. */
function srv10(): Message {
  const m = emptyMessage(1);
  m.qr = true;
  m.aa = true;
  const q = `_http._tcp.${SVC}`;
  m.questions.push({ name: q, type: Type.SRV, class: Class.IN });
  for (let i = 0; i < 10; i++) {
    const target = `pod-${i}.${SVC}`;
    m.answers.push({ name: q, type: Type.SRV, class: Class.IN, ttl: 30, data: { priority: 10, weight: 10, port: 80, target } });
    m.additionals.push({ name: target, type: Type.A, class: Class.IN, ttl: 30, data: { address: `10.244.0.${i}` } });
  }
  return m;
}

function dns2Packet(m: Message): Dns2Packet {
  const p = new Packet();
  p.header.id = m.id;
  p.header.qr = 1;
  p.header.aa = 1;
  p.questions.push(...m.questions);
  for (const a of m.answers) {
    const d = a.data as unknown as Record<string, unknown>;
    p.answers.push({ name: a.name, type: a.type, class: a.class, ttl: a.ttl, ...d });
  }
  for (const a of m.additionals) p.additionals.push({ name: a.name, type: a.type, class: a.class, ttl: a.ttl, ...(a.data as object) });
  return p;
}

const results: Record<string, number> = {};
for (const [label, make] of [['1 A', oneA], ['10 SRV + 10 A', srv10]] as const) {
  const m = make();
  const wire = encodeMessage(m).bytes;
  const p = dns2Packet(m);
  results[`encode ${label} ours`] = bench(`encode ${label}: ours`, () => encodeMessage(m));
  results[`encode ${label} dns2`] = bench(`encode ${label}: dns2 toBuffer`, () => p.toBuffer());
  results[`parse ${label} ours`] = bench(`parse ${label}: ours`, () => parseMessage(wire));
  results[`parse ${label} dns2`] = bench(`parse ${label}: dns2 Packet.parse`, () => Packet.parse(wire));
}

// The server's cache-hit path: key from the question, then copy + patch the stored answer.
const req = encodeMessage({ ...emptyMessage(7), rd: true, questions: [{ name: 'Web.Default.svc.cluster.local', type: Type.A, class: Class.IN }] }).bytes;
const tplMsg = oneA();
const qEnd = readQuestion(req);
const tpl = templateFromEncoded(encodeMessage(tplMsg), qEnd, 0);
const key = Buffer.allocUnsafe(QUESTION_KEY_MAX);
bench('hot path: question key (walk + lowercase)', () => key.toString('latin1', 0, readQuestion(req, 12, key) - 12));
bench('hot path: render stored answer (copy+patch)', () => render(tpl, req, qEnd - 4, null, 512, 0));

for (const label of ['1 A', '10 SRV + 10 A']) {
  const enc = results[`encode ${label} dns2`] / results[`encode ${label} ours`];
  const par = results[`parse ${label} dns2`] / results[`parse ${label} ours`];
  console.log(`${label}: encode ${enc.toFixed(1)}x faster than dns2, parse ${par.toFixed(1)}x`);
}
