// What one AnswerCache entry takes on the heap, against what entryBytes counts it as: 100,000
// NXDOMAIN answers relayed as dnscache stores them (templateFromWire), with a lifetime when run
// with `ttl`. Run: npx node --expose-gc bench/answer-cache-entry.ts [ttl]

import { AnswerCache, entryBytes } from '../pkg/dns/answer-cache.ts';
import { templateFromWire } from '../pkg/dns/template.ts';
import { encodeMessage } from '../pkg/dns/codec.ts';
import { emptyMessage } from '../pkg/dns/message.ts';
import { Rcode, Type } from '../pkg/dns/constants.ts';

const N = 100_000;
const withTtl = process.argv[2] === 'ttl';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const cache = new AnswerCache({ maxBytes: 1 << 30 });
gc();
const before = process.memoryUsage();
let counted = 0;
for (let i = 0; i < N; i++) {
  const m = emptyMessage(1);
  m.qr = true;
  m.rcode = Rcode.NXDOMAIN;
  const name = `r${Math.random().toString(36).slice(2, 12)}.default.svc.cluster.local`;
  m.questions.push({ name, type: Type.A, class: 1 });
  m.authorities.push({ name: 'cluster.local', type: Type.SOA, class: 1, ttl: 30, data: { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local', serial: 1, refresh: 7200, retry: 1800, expire: 86400, minimum: 30 } });
  const t = templateFromWire(encodeMessage(m).bytes);
  // The server's key: the question's wire bytes plus one byte of DO/CD.
  const key = `${name}\u0000\u0001\u0000\u0001\u0000`;
  cache.set(key, t, 0, withTtl ? 30 : undefined);
  counted += entryBytes(key, t);
}
gc();
const after = process.memoryUsage();
const per = (a: number, b: number): string => ((a - b) / N).toFixed(0);
console.log(`${cache.size} entries${withTtl ? ' with a lifetime' : ''}: heap ${per(after.heapUsed, before.heapUsed)} B/entry, outside the heap ${per(after.external + after.arrayBuffers, before.external + before.arrayBuffers)} B/entry, entryBytes ${(counted / N).toFixed(0)} B/entry`);
