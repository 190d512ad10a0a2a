// DNS over TCP for tests, client side or server side: pkg/dns's framer and splitter.

export { frame, readFrames as splitFrames } from '../../pkg/dns/frames.ts';
