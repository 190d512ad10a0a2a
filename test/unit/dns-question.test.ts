import t from 'tap';
import { QUESTION_KEY_MAX, ReadStatus, canonicalName, emptyOptView, readOpt, readQuestion, readStatusReason } from '../../pkg/dns/codec.ts';
import type { OptView } from '../../pkg/dns/codec.ts';

function query(name: number[], extra: number[] = []): Buffer {
  return Buffer.from([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, extra.length ? 1 : 0, ...name, 0, 1, 0, 1, ...extra]);
}
const KUBE = [4, ...Buffer.from('KuBe'), 7, ...Buffer.from('DeFault'), 0];

t.test('readQuestion walks the name in place and copies a lowercased key', async (t) => {
  const buf = query(KUBE);
  const key = Buffer.alloc(QUESTION_KEY_MAX);
  const end = readQuestion(buf, 12, key);
  t.equal(end, buf.length);
  t.equal(key.toString('latin1', 0, end - 12), '\x04kube\x07default\x00\x00\x01\x00\x01');
  t.equal(readQuestion(buf), end, 'the key is optional');
  // Only ASCII letters fold: a 0xC4 byte stays as it is.
  const high = query([2, 0xc4, 0x41, 0]);
  readQuestion(high, 12, key);
  t.same([...key.subarray(0, 3)], [2, 0xc4, 0x61]);
});

t.test('readQuestion reports bad questions as negative statuses', async (t) => {
  t.equal(readQuestion(query(KUBE).subarray(0, 20)), ReadStatus.SHORT);
  t.equal(readQuestion(query(KUBE).subarray(0, 27)), ReadStatus.SHORT, 'no QTYPE/QCLASS');
  t.equal(readQuestion(query([0xc0, 12])), ReadStatus.POINTER);
  t.equal(readQuestion(query([0x40, 0])), ReadStatus.LABEL);
  t.equal(readQuestion(query([0x80, 0])), ReadStatus.LABEL);
  const long = Array(5).fill([63, ...Buffer.alloc(63, 0x61)]).flat();
  t.equal(readQuestion(query(long)), ReadStatus.NAME_TOO_LONG);
  t.equal(readStatusReason(ReadStatus.NAME_TOO_LONG), 'name-too-long');
  t.equal(readStatusReason(ReadStatus.POINTER), 'question-pointer');
});

t.test('readOpt reads the OPT fields and checks its option layout', async (t) => {
  const view: OptView = emptyOptView();
  const opt = [0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 12, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8];
  const buf = query(KUBE, opt);
  const qEnd = readQuestion(buf);
  t.equal(readOpt(buf, qEnd, view), buf.length);
  t.match(view, { udpSize: 1232, extendedRcode: 0, version: 0, do: true, ecsFamily: 0 });
  const v1 = query(KUBE, [0, 0, 41, 0x10, 0, 0, 1, 0, 0, 0, 0]);
  readOpt(v1, qEnd, view);
  t.equal(view.version, 1);
  t.equal(readOpt(query(KUBE, [0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0]), qEnd, view), ReadStatus.NOT_OPT, 'an A record');
  t.equal(readOpt(query(KUBE, [1, 0x61, 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0]), qEnd, view), ReadStatus.NOT_OPT, 'not owned by the root');
  t.equal(readOpt(query(KUBE, [0, 0, 41, 0x10, 0]), qEnd, view), ReadStatus.SHORT);
  t.equal(readOpt(query(KUBE, [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 9, 1, 2, 3]), qEnd, view), ReadStatus.SHORT, 'RDATA past the end');
  t.equal(readOpt(query(KUBE, [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 5, 0, 10, 0, 9, 1]), qEnd, view), ReadStatus.BAD_OPT, 'option overruns');
  t.equal(readOpt(query(KUBE, [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 2, 0, 10]), qEnd, view), ReadStatus.BAD_OPT, 'half an option header');
});

t.test('canonicalName lowercases ASCII and drops one trailing dot', async (t) => {
  t.equal(canonicalName('KuBeRnEtEs.DeFaUlT.svc.cluster.local.'), 'kubernetes.default.svc.cluster.local');
  t.equal(canonicalName('already.lower'), 'already.lower');
  t.equal(canonicalName('trailing.'), 'trailing');
  t.equal(canonicalName('.'), '');
  t.equal(canonicalName(''), '');
  t.equal(canonicalName('escaped\\.'), 'escaped\\.', 'an escaped dot is part of the label');
  t.equal(canonicalName('escaped\\\\.'), 'escaped\\\\', 'an escaped backslash before a real dot');
  t.equal(canonicalName('ÀB'), 'Àb', 'only ASCII folds, as in DNS');
});
