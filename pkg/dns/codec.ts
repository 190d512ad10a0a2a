// The codec's public entry point: parse, encode, names and their errors.

export { parseMessage } from './parse.ts';
export { encodeMessage } from './encode.ts';
export type { EncodedMessage } from './encode.ts';
export { canonicalName, readName } from './names.ts';
export type { Cursor } from './names.ts';
export { readQuestion, readOpt, emptyOptView, ReadStatus, readStatusReason, QUESTION_KEY_MAX } from './question.ts';
export type { OptView } from './question.ts';
export { DnsEncodeError, DnsParseError, parseErrorReason } from './errors.ts';
export type { EncodeErrorCode, ParseErrorCode } from './errors.ts';
export { formatIPv4, formatIPv6, writeIPv4, writeIPv6 } from './ip.ts';
