// Whole seconds of a monotonic clock, for the lifetimes of cached answers. A cache hit reads it, so
// it is a number a timer moves at every second boundary instead of a clock call per packet.
//
// dnsmasq reads its clock once per turn of its event loop and works in whole seconds; this one is
// as fine: the timer runs in the timers phase of Node's loop, before the packets that phase lets
// in are read, and it re-reads the real clock when it fires (a Node timer may fire a little early
// or late), so the value is never ahead of real time and at most ~1 ms plus one loop turn behind.

import { performance } from 'node:perf_hooks';

/** Returns whole seconds; only differences between two readings mean anything. */
export type Clock = () => number;

let seconds = -1;
let timer: NodeJS.Timeout | null = null;

function tick(): void {
  const now = performance.now();
  seconds = Math.floor(now / 1000);
  // 1 ms past the next boundary: a timer never fires before its delay of loop time.
  timer = setTimeout(tick, 1000 - (now % 1000) + 1);
  // Must not keep a process alive that has nothing else to do.
  timer.unref();
}

/** The clock AnswerCache uses unless given another. Starts its timer on the first reading. */
export const coarseSeconds: Clock = () => {
  if (timer === null) tick();
  return seconds;
};
