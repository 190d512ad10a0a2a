import t from 'tap';
import { DnsParseError, parseMessage } from '../../pkg/dns/codec.ts';

// Hand-built hostile messages, one per failure the decoder must name.

function header(counts: { qd?: number; an?: number; ns?: number; ar?: number }): number[] {
  const { qd = 0, an = 0, ns = 0, ar = 0 } = counts;
  return [0x12, 0x34, 0x81, 0x80, 0, qd, 0, an, 0, ns, 0, ar];
}
function label(s: string): number[] {
  return [s.length, ...Buffer.from(s, 'latin1')];
}
const EXAMPLE = [...label('example'), 0]; // 9 bytes
const Q_A_IN = [0, 1, 0, 1];
/** Owner name, type, class IN, TTL 60, RDLENGTH. */
function rrHead(name: number[], type: number, rdlen: number): number[] {
  return [...name, type >> 8, type & 0xff, 0, 1, 0, 0, 0, 60, rdlen >> 8, rdlen & 0xff];
}
const OPT = [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0];

const cases: Array<[string, number[], string]> = [
  ['empty input', [], 'DNS_ERR_SHORT'],
  ['11-byte header', header({}).slice(0, 11), 'DNS_ERR_SHORT'],
  ['question count with no question', header({ qd: 1 }), 'DNS_ERR_SHORT'],
  ['question name cut mid-label', [...header({ qd: 1 }), 7, 0x65, 0x78], 'DNS_ERR_SHORT'],
  ['question without type and class', [...header({ qd: 1 }), ...EXAMPLE, 0, 1], 'DNS_ERR_SHORT'],
  ['answer count with no answer', [...header({ qd: 1, an: 1 }), ...EXAMPLE, ...Q_A_IN], 'DNS_ERR_SHORT'],
  ['record header cut short', [...header({ an: 1 }), ...EXAMPLE, 0, 1, 0, 1, 0], 'DNS_ERR_SHORT'],
  ['RDLENGTH past the end (overlong)', [...header({ an: 1 }), ...rrHead(EXAMPLE, 1, 200), 1, 2, 3, 4], 'DNS_ERR_SHORT'],
  ['pointer to itself', [...header({ qd: 1 }), 0xc0, 12, ...Q_A_IN], 'DNS_ERR_POINTER_LOOP'],
  ['pointer back into its own labels', [...header({ qd: 1 }), ...label('a'), 0xc0, 12, ...Q_A_IN], 'DNS_ERR_POINTER_LOOP'],
  [
    'loop that needs a forward pointer',
    // question at 12: "a" + pointer to 17; 17 holds "b" + pointer back to 12. The first jump is forward.
    [...header({ qd: 1 }), ...label('a'), 0xc0, 17, ...label('b'), 0xc0, 12],
    'DNS_ERR_BAD_POINTER',
  ],
  [
    'answer owner pointing back into its own label',
    // question "q" at 12..18, then the answer owner at 19: label "c" and a pointer to 20 (inside it).
    [...header({ qd: 1, an: 1 }), ...label('q'), 0, ...Q_A_IN, ...label('c'), 0xc0, 20, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0],
    'DNS_ERR_POINTER_LOOP',
  ],
  ['forward pointer', [...header({ qd: 1 }), 0xc0, 20, ...Q_A_IN, 0, 0, 0, 0], 'DNS_ERR_BAD_POINTER'],
  ['pointer beyond the message', [...header({ qd: 1 }), 0xff, 0xff, ...Q_A_IN], 'DNS_ERR_BAD_POINTER'],
  ['label type 0x40 (extended label)', [...header({ qd: 1 }), 0x41, 0, ...Q_A_IN], 'DNS_ERR_LABEL'],
  ['label type 0x80 (reserved)', [...header({ qd: 1 }), 0x81, 0x61, 0, ...Q_A_IN], 'DNS_ERR_LABEL'],
  [
    'name over 255 bytes',
    [...header({ qd: 1 }), ...Array(5).fill(label('x'.repeat(63))).flat(), 0, ...Q_A_IN],
    'DNS_ERR_NAME_TOO_LONG',
  ],
  [
    'name over 255 bytes through a pointer',
    [
      ...header({ qd: 2 }),
      ...Array(3).fill(label('x'.repeat(63))).flat(), 0, ...Q_A_IN,
      ...label('y'.repeat(63)), 0xc0, 12, ...Q_A_IN,
    ],
    'DNS_ERR_NAME_TOO_LONG',
  ],
  ['A with 5 bytes of RDATA', [...header({ an: 1 }), ...rrHead(EXAMPLE, 1, 5), 1, 2, 3, 4, 5], 'DNS_ERR_RDATA'],
  ['A with 3 bytes of RDATA', [...header({ an: 1 }), ...rrHead(EXAMPLE, 1, 3), 1, 2, 3, 0, 0], 'DNS_ERR_RDATA'],
  ['AAAA with 4 bytes of RDATA', [...header({ an: 1 }), ...rrHead(EXAMPLE, 28, 4), 1, 2, 3, 4], 'DNS_ERR_RDATA'],
  ['CNAME with bytes after its name', [...header({ an: 1 }), ...rrHead(EXAMPLE, 5, 4), ...label('a'), 0, 9], 'DNS_ERR_RDATA'],
  ['CNAME name running past RDLENGTH', [...header({ an: 1 }), ...rrHead(EXAMPLE, 5, 2), ...label('ab'), 0, 0], 'DNS_ERR_RDATA'],
  ['TXT string past RDLENGTH', [...header({ an: 1 }), ...rrHead(EXAMPLE, 16, 3), 5, 0x61, 0x62, 0, 0, 0], 'DNS_ERR_RDATA'],
  ['SOA without its numbers', [...header({ an: 1 }), ...rrHead(EXAMPLE, 6, 4), 0, 0, 0, 1, 0, 0], 'DNS_ERR_RDATA'],
  ['SRV shorter than its fixed part', [...header({ an: 1 }), ...rrHead(EXAMPLE, 33, 3), 0, 1, 0, 0], 'DNS_ERR_RDATA'],
  ['OPT in the answer section', [...header({ an: 1 }), ...OPT], 'DNS_ERR_OPT'],
  ['two OPT records', [...header({ ar: 2 }), ...OPT, ...OPT], 'DNS_ERR_OPT'],
  ['OPT owned by a non-root name', [...header({ ar: 1 }), ...rrHead(EXAMPLE, 41, 0)], 'DNS_ERR_OPT'],
  ['OPT option longer than the OPT', [...header({ ar: 1 }), 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 6, 0, 10, 0, 8, 1, 2], 'DNS_ERR_OPT'],
  ['OPT option header cut short', [...header({ ar: 1 }), 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 2, 0, 10], 'DNS_ERR_OPT'],
];

for (const [what, bytes, code] of cases) {
  t.test(what, async (t) => {
    const err = t.throws(() => parseMessage(Buffer.from(bytes)), { name: 'DnsParseError', code });
    t.type(err, DnsParseError);
  });
}

t.test('a plain Uint8Array (not a Buffer) is read the same way', async (t) => {
  const bytes = new Uint8Array([...header({ qd: 1 }), ...EXAMPLE, ...Q_A_IN]);
  t.match(parseMessage(bytes), { id: 0x1234, qr: true, rd: true, ra: true, questions: [{ name: 'example', type: 1, class: 1 }] });
});

t.test('random bytes never escape as anything but DnsParseError', async (t) => {
  let seed = 12345;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
  let parsed = 0;
  let rejected = 0;
  for (let i = 0; i < 5000; i++) {
    const len = rand() % 96;
    const bytes = Buffer.alloc(len);
    for (let j = 0; j < len; j++) bytes[j] = rand();
    // Small counts so that some messages get deep into the sections.
    if (len >= 12) for (const at of [4, 6, 8, 10]) bytes[at] = 0, bytes[at + 1] &= 3;
    try {
      parseMessage(bytes);
      parsed++;
    } catch (err) {
      if (!(err instanceof DnsParseError)) throw err;
      rejected++;
    }
  }
  t.equal(parsed + rejected, 5000);
  t.ok(rejected > 0 && parsed > 0, `parsed ${parsed}, rejected ${rejected}`);
});
