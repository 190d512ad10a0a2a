// The forwarder's in-place question reader, against messages built by dns2 and by hand.
import t from 'tap';
import { questionEnd, replyMismatch, sameQuestion } from '../../pkg/forward/wire.ts';
import { makeAnswer, makeQuery } from '../helpers/packets.ts';

function header(qdcount = 1): number[] {
  return [0x12, 0x34, 0x01, 0x00, 0x00, qdcount, 0, 0, 0, 0, 0, 0];
}

t.test('questionEnd', async (t) => {
  const q = makeQuery('www.example.com', 1);
  t.equal(questionEnd(q), q.length, 'a plain query ends with its question');
  t.equal(questionEnd(Buffer.from([...header(), 0, 0, 1, 0, 1])), 17, 'the root name');
  t.equal(questionEnd(Buffer.from([...header(0)])), -1, 'no question');
  t.equal(questionEnd(Buffer.from([...header(2), 0, 0, 1, 0, 1])), -1, 'two questions');
  t.equal(questionEnd(Buffer.from([...header(), 0xc0, 0x0c, 0, 1, 0, 1])), -1, 'a compression pointer');
  t.equal(questionEnd(Buffer.from([...header(), 64, ...Buffer.alloc(64, 0x61), 0, 0, 1, 0, 1])), -1, 'a label over 63');
  t.equal(questionEnd(Buffer.from([...header(), 3, 0x61, 0x62])), -1, 'a name cut short');
  t.equal(questionEnd(Buffer.from([...header(), 1, 0x61, 0, 0, 1, 0])), -1, 'class cut short');
  const long: number[] = [];
  for (let i = 0; i < 5; i++) long.push(63, ...Buffer.alloc(63, 0x61));
  t.equal(questionEnd(Buffer.from([...header(), ...long, 0, 0, 1, 0, 1])), -1, 'a name over 255 bytes');
  // 3 × 64 + 62 + 1 = 255 bytes exactly is the longest name; one byte more is too long
  const longest = [...long.slice(0, 192), 61, ...Buffer.alloc(61, 0x62), 0];
  t.equal(longest.length, 255);
  t.equal(questionEnd(Buffer.from([...header(), ...longest, 0, 1, 0, 1])), 12 + 255 + 4, 'a 255-byte name');
  const tooLong = [...long.slice(0, 192), 62, ...Buffer.alloc(62, 0x62), 0];
  t.equal(questionEnd(Buffer.from([...header(), ...tooLong, 0, 1, 0, 1])), -1, 'a 256-byte name');
  t.equal(questionEnd(Buffer.alloc(11)), -1, 'shorter than a header');
});

t.test('sameQuestion folds case in the name only', async (t) => {
  const q = makeQuery('www.example.com', 1);
  const end = questionEnd(q);
  t.ok(sameQuestion(makeAnswer(q, { name: 'WWW.Example.COM' }), q, end));
  t.notOk(sameQuestion(makeAnswer(q, { name: 'www.example.org' }), q, end));
  t.notOk(sameQuestion(makeAnswer(q, { name: 'www.example.co' }), q, end));
  // types 0x41 (65, HTTPS) and 0x61 (97) differ by the ASCII case bit: they must not compare equal
  const https = makeQuery('www.example.com', 1, 65);
  t.notOk(sameQuestion(makeAnswer(https, { type: 97 }), https, questionEnd(https)));
  t.ok(sameQuestion(makeAnswer(https), https, questionEnd(https)));
});

t.test('replyMismatch names the reason', async (t) => {
  const q = makeQuery('www.example.com', 0x1111);
  const end = questionEnd(q);
  t.equal(replyMismatch(makeAnswer(q), 0x1111, q, end), null);
  t.equal(replyMismatch(makeAnswer(q), 0x2222, q, end), 'id');
  t.equal(replyMismatch(makeAnswer(q, { qr: false }), 0x1111, q, end), 'not-a-response');
  t.equal(replyMismatch(makeAnswer(q, { name: 'x.example.com' }), 0x1111, q, end), 'question');
  t.equal(replyMismatch(Buffer.from([0x11, 0x11, 0x81]), 0x1111, q, end), 'short');
});
